// What happens around each model call of an agent a framework runs, for the framework adapters
// (`workmem/ai-sdk`, `workmem/agents`): the messages the agent gained logged to a workmem
// session, and the request the engine's `call` steps decide (`prepareCall`: the view compacted
// by the fallback where it would cross its threshold, in the engine's order with the working
// memory and `context_meta`); and the answers of workmem's own tools, `read_history` and
// `update_memory`. The engine makes every decision; this module only reads and writes the
// session and counts tokens. An adapter converts its framework's messages to the engine's
// chat messages, each with the key it knows it by, and back.
import { fallback, ownTools, prepareCall, readAnswer, readRange, updateAnswer, WorkmemError } from './index.js';

// What a request's framing adds to its messages' tokens (the reply's priming), and a tool
// call's, as the Rust host counts them.
const REPLY = 3;
const CALL = 8;
const ARCHIVE = 'working-memory/detail/history.md';
// The Rust host counts long text a piece of at most this many bytes at a time
// (`workmem_llm::Tokenizer::count`): the tokenizers' regex backtracks over long whitespace.
const PIECE = 16 << 10;

/**
 * `text` in the pieces the Rust host counts it in, so that every runtime's count is its own
 * (tests/data/tokens.json holds them equal): a piece ends after the last newline in its second
 * half that the pre-tokenizer ends a word at (one not followed by whitespace or `/`), else after
 * its last newline there, else at a character's start.
 */
function* pieces(text) {
  let data = Buffer.from(text, 'utf8');
  while (data.length > PIECE) {
    let cut = PIECE;
    while ((data[cut] & 0xc0) === 0x80) cut--;
    let half = PIECE / 2;
    while ((data[half] & 0xc0) === 0x80) half++;
    let end = cut;
    let any = -1;
    for (let i = cut - 1; i >= half; i--) {
      if (data[i] !== 0x0a) continue;
      if (any < 0) any = i + 1;
      const next = data.subarray(i + 1, i + 5).toString('utf8').slice(0, 1);
      if (next && !/\s/u.test(next) && next !== '/') {
        end = i + 1;
        any = -2;
        break;
      }
    }
    if (any >= 0) end = any;
    yield data.subarray(0, end).toString('utf8');
    data = data.subarray(end);
  }
  if (data.length) yield data.toString('utf8');
}

let o200k;
/** o200k_base's count (gpt-tokenizer), special tokens' text as the token, as the Rust host counts GPT-4o's. */
async function o200kCount() {
  if (!o200k) {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    o200k = (text) => {
      let n = 0;
      for (const piece of pieces(text)) n += countTokens(piece, { allowedSpecial: 'all' });
      return n;
    };
  }
  return o200k;
}

/**
 * Bounds every model call to `window` tokens through a workmem session (`workmem/session`'s
 * `Session`): the fallback compacts at `compactAt` of the window down to `compactGoal`,
 * keeping the last `keepRecent` groups; the first user message (the task) is never compacted.
 */
export class Bound {
  #count;
  #counted = new Map();
  #byMessage = new WeakMap();
  #logged;

  constructor(session, { window = 128_000, compactAt = 0.75, compactGoal = 0.5, keepRecent = 5, remindAfterRounds = 10, count = undefined } = {}) {
    this.session = session;
    this.window = window;
    this.bounds = { window, threshold: Math.floor(window * compactAt), goal: Math.floor(window * compactGoal), keepRecent, remindAfterRounds, archiveTo: ARCHIVE };
    this.#count = count;
  }

  async #counter() {
    this.#count ??= await o200kCount();
    return this.#count;
  }

  /** A message's tokens in a request, as the Rust host counts them. */
  async tokens(m) {
    return this.#tokens(m, await this.#counter());
  }

  /**
   * Each message counted once: by the message (a view keeps its messages from one call to the
   * next), else by its text.
   */
  #tokens(m, count) {
    let n = this.#byMessage.get(m);
    if (n !== undefined) return n;
    const calls = m.toolCalls ?? [];
    const key = `${m.role}\u0000${m.content}\u0000${calls.map((c) => `${c.name}\u0000${c.arguments}`).join('\u0000')}`;
    n = this.#counted.get(key);
    if (n === undefined) {
      n = 3 + count(m.role) + count(m.content) + calls.reduce((a, c) => a + CALL + count(c.name) + count(c.arguments), 0);
      this.#counted.set(key, n);
    }
    this.#byMessage.set(m, n);
    return n;
  }

  /** What offering tools adds, given their definitions as JSON text (none: 0). */
  async toolsTokens(definitions) {
    return definitions ? 12 + (await this.#counter())(definitions) : 0;
  }

  /**
   * The keys of the messages the session holds and has not withdrawn (read from its log once, so
   * that a session resumes after a restart; `forget` reads it again).
   */
  async logged() {
    if (!this.#logged) {
      const keys = new Map();
      for (const r of await this.session.records()) {
        if (r.kind === 'withdrawal') for (const seq of r.withdraws) keys.delete(seq);
        for (const o of r.opaque ?? []) if (typeof o?.key === 'string') keys.set(r.seq, o.key);
      }
      this.#logged = new Set(keys.values());
    }
    return this.#logged;
  }

  /** Reads the logged keys anew on the next `log` (after a withdrawal). */
  forget() {
    this.#logged = undefined;
  }

  /**
   * Logs the messages whose key the session does not hold yet, in order: `[key, message, extra]`
   * each, `extra` the parts of it in its framework's shape that the session keeps and never reads.
   */
  async log(messages) {
    const logged = await this.logged();
    const fresh = messages.filter(([key]) => !logged.has(key));
    if (!fresh.length) return;
    await this.session.append(fresh.map(([, m]) => m), fresh.map(([key, , extra]) => [{ key }, ...(extra ?? [])]));
    for (const [key] of fresh) logged.add(key);
  }

  /**
   * The bounded request for the session as it stands, the engine's steps driven:
   * `{ system, messages: [[seq | null, message]], tokens }`, the history's messages with their
   * sequence numbers. Throws WorkmemError for one that no compaction brings under the window.
   */
  async request(system, toolsTokens) {
    const meta = await this.session.meta();
    let view = await this.session.view();
    const call = {
      bounds: this.bounds, systemPrompt: system, overview: await this.session.overview(), viewTokens: 0, viewEntries: 0,
      overhead: toolsTokens + REPLY, counted: [], compactions: 0, exhausted: false,
      standing: { rounds: meta.rounds ?? 0, memoryUpdatedRound: meta.memory_updated_round ?? 0 },
    };
    const count = await this.#counter();
    // The view as the engine's steps take it, anew only after a compaction changed it.
    const seen = () => {
      call.viewTokens = view.entries.reduce((total, e) => total + (e.tokens = this.#tokens(e.message, count)), 0);
      call.viewEntries = view.entries.length;
      call.task = view.entries.find((e) => e.message.role === 'user')?.seq;
      const last = view.lastCompaction;
      call.standing.lastCompaction = last ? { round: last.round ?? 0, notice: last.notice } : null;
    };
    seen();
    let step;
    for (;;) {
      step = prepareCall(call);
      if (step.send) break;
      if (step.count) {
        for (const m of step.count) call.counted.push(this.#tokens(m, count));
        continue;
      }
      const planned = fallback(view.entries, { ...step.compact, archiveLines: await this.session.archiveLines(step.compact.archiveTo) });
      if (!planned?.replacements.length) {
        call.exhausted = true;
        continue;
      }
      await this.session.logCompaction(planned, { archiveTo: step.compact.archiveTo });
      call.compactions++;
      view = await this.session.view();
      seen();
    }
    await this.session.countRound();
    const { leading, meta: block, tokens } = step.send;
    const messages = [
      ...leading.slice(1).map((m) => [null, m]),
      ...view.entries.map((e) => [e.seq, e.message]),
      [null, { role: 'system', content: block, toolCalls: [] }],
    ];
    return { system: leading[0].content, messages, tokens };
  }

  // --- workmem's own tools ------------------------------------------------------------------

  /** workmem's own tools as the engine defines them: `{name, description, parameters}` (a JSON schema). */
  tools() {
    return ownTools();
  }

  /** The answer to a call of one of `tools()` with its parsed arguments. */
  async answer(name, args) {
    if (name === 'read_history') return this.readHistory(String(args?.seq ?? ''), args?.from ?? 0);
    if (name === 'update_memory') return this.updateMemory(String(args?.dsl ?? ''));
    return `error: ${name} is not one of workmem's tools`;
  }

  /** `read_history`'s answer, as the engine words it (an error as "error: ..." for the model to read). */
  async readHistory(seq, start = 0) {
    // The engine takes a 32-bit byte: a model's larger (or negative, or fractional) number is
    // refused as the Rust host refuses it, never read modulo 2^32.
    if (!Number.isInteger(start) || start < 0 || start > 0xffffffff) return 'error: read_history needs a non-negative integer argument "from"';
    try {
      return readAnswer(seq, await this.session.originals(readRange(seq)), start);
    } catch (e) {
      if (e instanceof WorkmemError) return `error: ${e.message}`;
      throw e;
    }
  }

  /** `update_memory`'s answer, as the engine words it: what the update did, or why it was refused (line and column), the memory then unchanged. */
  async updateMemory(dsl) {
    try {
      return updateAnswer(await this.session.apply(dsl));
    } catch (e) {
      if (!(e instanceof WorkmemError) || !e.diagnostics.length) throw e;
      return updateAnswer(null, e.diagnostics);
    }
  }
}
