// workmem for JavaScript: the engine component (transpiled by jco into gen/). A Memory lives
// inside the engine; an apply carries the DSL in and the outcome out. Refused input is thrown
// as a WorkmemError that carries the diagnostics (1-based line and column).
import { board as boards, call, context, document as documents, history, memory as engine } from './gen/workmem.js';

/**
 * An update the engine refused (`diagnostics` says where and why), or a compaction it refused
 * (`kind` is 'nothing', 'empty-summary' or 'invariant').
 */
export class WorkmemError extends Error {
  constructor(message, diagnostics = [], kind = undefined) {
    super(message);
    this.name = 'WorkmemError';
    this.diagnostics = diagnostics;
    this.kind = kind;
  }
}

/** The current time as the engine stores it: RFC 3339, UTC, whole seconds. */
export function now() {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

const errorsIn = (diagnostics) => diagnostics.filter((d) => d.severity === 'error');

function invalid(diagnostics) {
  const errors = errorsIn(diagnostics);
  const first = errors[0];
  const where = first ? `; first at ${first.line}:${first.column}: ${first.message}` : '';
  return new WorkmemError(`the update has ${errors.length} error(s)${where}`, diagnostics);
}

/** jco throws a result's `err` as an Error whose `payload` is the value. */
function unwrap(f, toError) {
  try {
    return f();
  } catch (e) {
    if (e && typeof e === 'object' && 'payload' in e) throw toError(e.payload);
    throw e;
  }
}

/** Reads a DSL update. Never throws for bad input: `ok` is false and `diagnostics` explain. */
export function parse(text) {
  const o = engine.parse(text);
  return { ok: o.update !== undefined, update: o.update ?? null, diagnostics: o.diagnostics };
}

/** The guiding overview.md of a new session. */
export const overviewTemplate = () => engine.overviewTemplate();

/** A working memory, kept inside the engine. */
export class Memory {
  #inner;

  /** The memory of a new session (or, internally, one the engine handed back). */
  constructor(inner = new engine.Memory()) {
    this.#inner = inner;
  }

  /** A memory from its serialized form: `save()`, or a session's state.json from any runtime. */
  static load(state) {
    return new Memory(unwrap(() => engine.Memory.load(state), (why) => new WorkmemError(String(why))));
  }

  /** state.json: the engine's serialized form, the same bytes from every runtime. */
  save() {
    return this.#inner.save();
  }

  /** `parse`, plus warnings for ARCHIVEs of IDs this memory does not have. */
  validate(text) {
    const o = this.#inner.validate(text);
    return { ok: o.update !== undefined, update: o.update ?? null, diagnostics: o.diagnostics };
  }

  /**
   * Parses, validates and merges `text`. Returns what changed (and, when asked, the new
   * overview and state); throws WorkmemError, changing nothing, when the update has errors.
   */
  apply(text, { at = now(), overview = false, state = false } = {}) {
    return unwrap(() => this.#inner.apply(text, at, { overview, state }), invalid);
  }

  /** Merges update objects (ones you built yourself), in order, all or none. */
  merge(updates, { at = now(), overview = false, state = false } = {}) {
    return unwrap(() => this.#inner.merge(updates, at, { overview, state }), (why) => new WorkmemError(String(why)));
  }

  /** working-memory/overview.md. */
  render() {
    return this.#inner.render();
  }

  /** A copy of the whole memory, for inspection. */
  snapshot() {
    return this.#inner.snapshot();
  }

  /** The memory-update prompt (spec 000 §5.1) for `task`. */
  updatePrompt(task) {
    return this.#inner.updatePrompt(task);
  }

  /**
   * Spec 000's memory update, driven here with any model client, async included: `ask` gets
   * the conversation (`[{role, content}]`) and returns (or resolves to) the model's text. A
   * malformed answer is sent back with its diagnostics, at most `maxReprompts` times; a valid
   * one is applied. Throws WorkmemError, changing nothing, when every answer was malformed.
   */
  async update(task, ask, { maxReprompts = 2, at = now, overview = true, state = true } = {}) {
    const run = new engine.UpdateRun(this.#inner, task, maxReprompts);
    try {
      for (let attempts = 1; ; attempts++) {
        const answer = await ask(run.request());
        const step = run.answer(this.#inner, answer, at(), { overview, state });
        if (step.tag === 'applied') return { attempts, ...step.val };
        if (step.tag === 'gave-up') {
          throw new WorkmemError(`the model's answer was still invalid after ${attempts} attempts; nothing was applied`, step.val);
        }
      }
    } finally {
      run[Symbol.dispose]();
    }
  }
}

/**
 * An `ask` for Memory#update over an OpenAI-compatible Chat Completions endpoint, with fetch.
 * `baseUrl` runs up to `/v1`.
 */
export function chatCompletions({ baseUrl, model, apiKey, fetch: fetchImpl = globalThis.fetch }) {
  return async (messages) => {
    const headers = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const response = await fetchImpl(`${baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model, messages }),
    });
    if (!response.ok) throw new Error(`the model endpoint answered HTTP ${response.status}: ${await response.text()}`);
    const body = await response.json();
    return body.choices[0].message.content ?? '';
  };
}

// Compaction (spec 003). Views and replacements use plain numbers for sequence numbers;
// the component's u64s are bigints.
const toEntry = (e) => ({ seq: BigInt(e.seq), message: e.message, tokens: e.tokens ?? 0 });
const fromEntry = (e) => ({ seq: Number(e.seq), message: e.message, tokens: e.tokens });
const fromCompaction = (c) => ({
  ...c,
  replacements: c.replacements.map((r) => ({ replaces: Array.from(r.replaces, Number), message: r.message })),
  view: c.view.map(fromEntry),
});

function compactError(e) {
  const why = {
    nothing: () => e.val,
    'empty-summary': () => 'the summary came back empty; nothing was compacted',
    invariant: () => `compaction refused, it would break an invariant: ${e.val}`,
  }[e.tag]();
  return new WorkmemError(why, [], e.tag);
}

const COMPACT_DEFAULTS = { target: 'all', strategy: 'archive', keepRecent: 5, archiveTo: 'working-memory/detail/history.md', archiveLines: 0, neverCompact: [], minFree: 0 };

/**
 * Spec 003's compact_history over a history view (`[{seq, message, tokens}]`, oldest first;
 * `seq` numbers your log's entries). Returns the replacements to append to your log, the text
 * to append to `archiveTo`, the view after, and the notice for the model. With strategy
 * 'summarize', `ask` (sync or async, like Memory#update's) gets the engine's request and
 * returns the model's summary. Throws WorkmemError (with `kind`) when nothing is worth
 * compacting, the summary is empty, or an invariant would break: append nothing then.
 */
export async function compact(view, options = {}, ask = undefined) {
  const request = { ...COMPACT_DEFAULTS, ...options, keep: BigUint64Array.from((options.keep ?? []).map(BigInt)), summary: undefined };
  const entries = view.map(toEntry);
  for (;;) {
    const plan = unwrap(() => history.compact(entries, request), compactError);
    if (plan.tag === 'done') return fromCompaction(plan.val);
    if (!ask) throw new WorkmemError("strategy 'summarize' needs `ask`, a model client", [], 'nothing');
    request.summary = await ask(plan.val);
  }
}

/**
 * The fallback (spec 003 §3): null while `used` (the whole request's tokens) is under
 * `threshold`; otherwise an archive compaction down towards `goal`.
 */
export function fallback(view, { used, threshold, goal, keepRecent = 5, archiveTo = COMPACT_DEFAULTS.archiveTo, archiveLines = 0, neverCompact = [], keep = [] }) {
  const request = { used, threshold, goal, keepRecent, archiveTo, archiveLines, neverCompact, keep: BigUint64Array.from(keep.map(BigInt)) };
  const done = history.fallback(view.map(toEntry), request);
  return done === undefined ? null : fromCompaction(done);
}

/** The view after `replacements`: how a log of messages and compactions reads back. */
export function applyReplacements(view, replacements) {
  const wit = replacements.map((r) => ({ replaces: BigUint64Array.from(r.replaces.map(BigInt)), message: r.message }));
  return history.applyReplacements(view.map(toEntry), wit).map(fromEntry);
}

// Around each model call of an agent a framework runs (wit/call.wit): the engine decides, the
// adapter counts and logs.

/**
 * The next step of a model call: `{ count: messages }` (append their tokens to
 * `request.counted` and ask again), `{ compact: fallbackOptions }` (run `fallback` over the view
 * with them, `archiveLines` set; log what it returns and ask again with `compactions` one more,
 * or with `exhausted` where it returns null), or `{ send: { leading, meta, tokens } }`. Throws
 * WorkmemError for a request over the window with all the fallback may compact compacted.
 */
export function prepareCall({ bounds, task, standing, ...rest }) {
  const { remindAfterRounds, maxCompactions = 3, archiveTo = COMPACT_DEFAULTS.archiveTo, keepRecent = 5, ...b } = bounds;
  const request = {
    overhead: 0, counted: [], compactions: 0, exhausted: false, ...rest,
    bounds: { ...b, keepRecent, remindAfterRounds: remindAfterRounds || undefined, maxCompactions, archiveTo },
    task: task === undefined || task === null ? undefined : BigInt(task),
    standing: witStanding(standing),
  };
  const step = unwrap(() => call.prepare(request), (why) => new WorkmemError(why));
  if (step.tag === 'count') return { count: step.val };
  if (step.tag === 'compact') return { compact: { ...step.val, keep: Array.from(step.val.keep, Number) } };
  return { send: step.val };
}

/** The WIT's `standing`: counters as u64, absent ones 0. */
function witStanding({ rounds = 0, memoryUpdatedRound = 0, lastCompaction = null } = {}) {
  return {
    rounds: BigInt(rounds),
    memoryUpdatedRound: BigInt(memoryUpdatedRound),
    lastCompaction: lastCompaction ? { round: BigInt(lastCompaction.round), notice: lastCompaction.notice } : undefined,
  };
}

/** What `context_meta` says of where a session stands (see index.d.ts). */
export function remind(standing) {
  const { roundsSinceUpdate, compactionNotice } = call.remind(witStanding(standing));
  return compactionNotice === undefined ? { roundsSinceUpdate } : { roundsSinceUpdate, compactionNotice };
}

/** workmem's own tools where the fallback compacts: `{name, description, parameters}`, the last a JSON schema. */
export const ownTools = () => call.ownTools().map((t) => ({ ...t, parameters: JSON.parse(t.parameters) }));

/**
 * `update_memory`'s answer: what `applied` did, with its warnings; or, with `applied` null,
 * each of `errors` with its line and column, and that the memory is unchanged.
 */
export const updateAnswer = (applied, errors = []) => call.updateAnswer(
  applied ? { seq: applied.seq, added: applied.added, archived: applied.archived, ignored: applied.ignored, warnings: applied.warnings } : undefined,
  errors,
);

/** `read_history`'s argument ("17", "12-20") as `[first, last]`; throws WorkmemError saying what is wrong. */
export function readRange(seq) {
  const [first, last] = unwrap(() => call.readRange(seq), (why) => new WorkmemError(why));
  return [Number(first), Number(last)];
}

/**
 * `read_history`'s answer: the messages logged in `seq`'s range (`found`, as a view's entries),
 * from byte `start`, within 64 KiB; throws WorkmemError when none were found or `start` is past the end.
 */
export const readAnswer = (seq, found, start = 0) => unwrap(() => call.readAnswer(seq, found.map(toEntry), start), (why) => new WorkmemError(why));

// The request to the model (spec 001).
const HISTORY_MODES = ['auto', 'all', 'active-turn', 'last-n'];

/**
 * The request in spec 001's order: the system prompt with the working-memory instructions,
 * AGENTS.md, the working memory, then the history `historyMode` selects. The prefix is
 * byte-identical while the inputs before the history do not change. Count its tokens, then
 * append `contextMeta`'s block last, as a system message.
 */
export function assemble({
  systemPrompt, overview, history = [], activeTurn = 0, historyMode = 'auto', lastN = 0, agentsMd = undefined,
  overviewPath = 'working-memory/overview.md', detailPath = 'working-memory/detail/',
}) {
  if (!HISTORY_MODES.includes(historyMode)) throw new TypeError(`historyMode is one of ${HISTORY_MODES.join(', ')}, not ${historyMode}`);
  const mode = historyMode === 'last-n' ? { tag: 'last-n', val: lastN } : { tag: historyMode };
  const messages = history.map((m) => ({ ...m, toolCalls: m.toolCalls ?? [] }));
  return context.assemble({ systemPrompt, agentsMd, overview, history: messages, activeTurn, historyMode: mode, overviewPath, detailPath });
}

/** The context_meta block of spec 001 US-3, reminder line included. */
export function contextMeta({ messagesInHistory = 0, workingMemorySize = 0, roundsSinceUpdate = 0, ...rest }) {
  return context.contextMeta({ messagesInHistory, workingMemorySize, roundsSinceUpdate, ...rest });
}

/** Whether overview.md holds content beyond the template; until then 'auto' keeps the whole history. */
export const overviewMaintained = (overview) => context.overviewMaintained(overview);

/**
 * An op the board refused (`rule` names it: 'unknown-task', 'illegal-transition',
 * 'cycle', 'empty', 'too-large', 'claimed', 'invalid-op', ...; `detail` is the engine's value),
 * in the engine's words. Nothing was applied.
 */
export class BoardError extends Error {
  constructor(error) {
    super(boards.describe(error));
    this.name = 'BoardError';
    this.rule = error.tag;
    this.detail = error.val;
  }
}

const refused = (error) => new BoardError(error);

/**
 * Spec 002's shared task board, kept inside the engine. It changes only through `apply`,
 * which checks an op against the rules and applies all of it or nothing; keep the `event`
 * each apply returns in an append-only log, and `replay` rebuilds the board from it.
 */
export class Board {
  #inner;

  constructor(inner) {
    this.#inner = inner;
  }

  /** A new, active board at revision 0. */
  static create({ id, name, goal, constraints = [], memoryCoreRefs = [], at = now() }) {
    return new Board(unwrap(() => boards.Board.create(id, name, goal, constraints, memoryCoreRefs, at), refused));
  }

  /** A board from its serialized form (`save`, from any runtime). */
  static load(state) {
    return new Board(unwrap(() => boards.Board.load(state), (why) => new WorkmemError(String(why))));
  }

  /** The serialized board: the same bytes from every runtime. */
  save() {
    return this.#inner.save();
  }

  /** How many ops were applied since creation: what a writer compares and swaps on. */
  get revision() {
    return Number(this.#inner.revision());
  }

  /**
   * Applies `op` (as the event log records it: `{ op: 'add_task', title, description,
   * depends_on, needs_review }`, ...) by `actor`. Returns the new revision and the event to
   * log; throws BoardError, changing nothing, when the op breaks a rule.
   */
  apply(actor, op, { at = now() } = {}) {
    const text = typeof op === 'string' ? op : JSON.stringify(op);
    const applied = unwrap(() => this.#inner.applyJson(actor, at, text), refused);
    return { revision: Number(applied.revision), event: applied.event };
  }

  /** Applies the board's next event from its log; returns the new revision. */
  replay(event) {
    const text = typeof event === 'string' ? event : JSON.stringify(event);
    return Number(unwrap(() => this.#inner.replay(text), (e) => (e.tag === 'refused' ? refused(e.val) : new WorkmemError(e.tag === 'out-of-order' ? `the board's next event is revision ${e.val}` : `not a board event: ${e.val}`))));
  }

  /**
   * A view, parsed: 'tasks', 'ready', 'blocked', 'in-progress', 'needs-review', 'failed',
   * 'stranded', 'decisions', 'discoveries', 'artifacts', 'nudges', 'contributions',
   * 'candidates', 'stale' (arg: a time) or 'context-for-task' (arg: a task ID).
   */
  view(name, arg) {
    const tag = name.replaceAll('_', '-');
    const v = tag === 'stale' || tag === 'context-for-task' ? { tag, val: arg } : { tag };
    return JSON.parse(unwrap(() => this.#inner.view(v), refused));
  }

  /** A task's context as a worker's LLM reads it (markdown). */
  brief(task) {
    return unwrap(() => this.#inner.brief(task), refused);
  }
}

/**
 * A text refused as a context document (spec 004), in the engine's words, with its line and
 * column where the rule has one. `rule`: 'empty', 'too-large', 'invalid-utf8',
 * 'control-character' or 'noncharacter'.
 */
export class DocumentError extends Error {
  constructor(error) {
    super(documents.describe(error));
    this.name = 'DocumentError';
    this.rule = error.tag;
    this.line = error.val?.line;
    this.column = error.val?.column;
  }
}

/**
 * Spec 004's single context document: the rules a store applies before keeping a version, and
 * its sections (`# Name` headings), to read or replace one without rewriting the rest.
 */
export const contextDocument = {
  /** Throws DocumentError unless `text` (a string or UTF-8 bytes) is a valid document of at most `maxBytes`. */
  validate(text, maxBytes) {
    const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    unwrap(() => documents.validate(bytes, BigInt(maxBytes)), (e) => new DocumentError(e));
  },
  /** The sections in order: `{ name, body, line }`; text before the first heading has an empty name. */
  sections: (text) => documents.sections(text),
  /** The body of section `name` (any case), or undefined. */
  section: (text, name) => documents.getSection(text, name),
  /** The document with section `name`'s body replaced, every other byte as it was. */
  replaceSection: (text, name, body) => documents.replaceSection(text, name, body),
  /** A new document with spec 004's eight sections. */
  template: () => documents.template(),
};
