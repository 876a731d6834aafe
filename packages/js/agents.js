// workmem inside the OpenAI Agents SDK for TypeScript (`workmem/agents`): `workmemAgents` gives a
// `callModelInputFilter` that bounds every model call of a run through a workmem session (what
// the run gained logged, the fallback's compactions, the memory and `context_meta` in the
// engine's order) and workmem's own tools as the SDK's function tools; `WorkmemSession` is the
// same and also the SDK's `Session` (the conversation kept across runs in the workmem session).
//
//   const memory = workmemAgents({ session: await Session.create(root), window: 128_000 });
//   const agent = new Agent({ name: 'coder', instructions: '...', tools: [readFile, ...memory.tools] });
//   await run(agent, task, { callModelInputFilter: memory.callModelInputFilter, maxTurns: 100 });
//
//   const memory = new WorkmemSession({ session: await Session.create(root), window: 128_000 });
//   await run(agent, task, { session: memory, callModelInputFilter: memory.callModelInputFilter });
//
// The run's items are the session's messages by their place in the run's input (which the SDK
// only appends to), so a run continued from `result.history`, or a new filter on the same
// session after a restart, logs only what is new. An assistant's turn (its reasoning, its text,
// its function calls) is one message; each item is kept as it came and sent back as it came
// while no compaction replaced its message.
import { tool } from '@openai/agents';
import { Bound } from './bound.js';
import { recordMessage } from './session.js';

const text = (content) => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content?.type === 'text' ? content.text : '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
};

/**
 * The run's items as `[key, message, items]`, keyed by their place in the conversation from
 * `base`: an assistant's turn (reasoning, text, calls) one message, each output one.
 */
function messages(items, base = 0) {
  const out = [];
  let turn = null;
  items.forEach((item, index) => {
    const at = base + index;
    const kind = item.type ?? 'message';
    if (kind === 'reasoning' || kind === 'function_call' || (kind === 'message' && item.role === 'assistant')) {
      turn ??= [`agents:${at}`, { role: 'assistant', content: '', toolCalls: [] }, []];
      turn[2].push(item);
      if (kind === 'function_call') turn[1].toolCalls.push({ id: item.callId, name: item.name, arguments: item.arguments || '{}' });
      else if (kind === 'message') turn[1].content += text(item.content);
      return;
    }
    if (turn) out.push(turn);
    turn = null;
    if (kind === 'function_call_result') {
      out.push([`agents:${at}`, { role: 'tool', content: text(item.output), toolCallId: item.callId, toolCalls: [] }, [item]]);
    } else if (kind === 'message') {
      out.push([`agents:${at}`, { role: item.role === 'system' ? 'system' : 'user', content: text(item.content), toolCalls: [] }, [item]]);
    } else {
      // An item workmem does not know (a hosted tool's call, an image): kept as it came, read
      // as a note of its kind.
      out.push([`agents:${at}`, { role: 'user', content: `[${kind}]`, toolCalls: [] }, [item]]);
    }
  });
  if (turn) out.push(turn);
  return out;
}

/** A message the engine wrote (a placeholder, the memory, `context_meta`) as input items. */
function items(m, toolNames) {
  if (m.role === 'assistant') {
    const out = m.content ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.content }] }] : [];
    for (const c of m.toolCalls) out.push({ type: 'function_call', callId: c.id, name: c.name, arguments: c.arguments, status: 'completed' });
    return out;
  }
  if (m.role === 'tool') {
    return [{ type: 'function_call_result', callId: m.toolCallId ?? '', name: toolNames.get(m.toolCallId) ?? 'tool', status: 'completed', output: { type: 'text', text: m.content } }];
  }
  return [{ type: 'message', role: m.role === 'system' ? 'system' : 'user', content: m.content }];
}

const same = (a, b) => a.role === b.role && a.content === b.content && (a.toolCallId ?? '') === (b.toolCallId ?? '')
  && a.toolCalls.length === b.toolCalls.length && a.toolCalls.every((c, i) => c.id === b.toolCalls[i].id && c.arguments === b.toolCalls[i].arguments);

/**
 * `{ callModelInputFilter, tools }` (see the module). `session` is a `workmem/session` Session;
 * the options are the fallback's (`window`, `compactAt`, `compactGoal`, `keepRecent`,
 * `remindAfterRounds`) and `count`. The filter throws WorkmemError for a request that no
 * compaction brings under the window, rather than sending it.
 */
export function workmemAgents({ session, ...options }) {
  return new WorkmemSession({ session, ...options });
}

/**
 * An `@openai/agents` `Session` over a workmem session, and the `callModelInputFilter` of the runs
 * that use it (pass both). `getItems` gives the conversation as the session's view holds it:
 * items no compaction replaced as they came, compacted ones as their placeholders; `addItems`
 * logs the run's items (the filter logged most already, under the same keys: an item is known by
 * its place in the conversation); `popItem` and `clearSession` withdraw messages from the view
 * (the log keeps them, `read_history` still reads them; the memory stays). One per conversation.
 */
export class WorkmemSession {
  // Where a run's own items start in its input, the history's groups before them, the index in
  // the conversation of the first own item, and the own items `addItems` was given (set when
  // the SDK asks for the history).
  #served = 0;
  #history = [];
  #base = 0;
  #added = 0;
  // The items the filter wrote itself (the memory, placeholders, `context_meta`), as JSON: the
  // SDK persists what a filter injects as the turn's input, and `addItems` leaves them out.
  #injected = new Set();

  constructor({ session, ...options }) {
    this.session = session;
    this.bound = new Bound(session, options);
    this.tools = this.bound.tools().map((t) => tool({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      // Not strict: `read_history`'s `from` is optional.
      strict: false,
      execute: async (input) => this.bound.answer(t.name, typeof input === 'object' && input !== null ? input : {}),
    }));
    this.callModelInputFilter = (args) => this.#filter(args);
  }

  async #filter({ modelData, agent }) {
    const input = [...modelData.input];
    const own = messages(input.slice(this.#served), this.#base);
    await this.bound.log(own);
    const offered = [];
    for (const t of agent.tools ?? []) {
      if (t.type === 'function') offered.push({ name: t.name, description: t.description, parameters: t.parameters });
    }
    const request = await this.bound.request(modelData.instructions ?? '', await this.bound.toolsTokens(offered.length ? JSON.stringify(offered) : ''));
    const kept = await this.#kept();
    // The input's own objects for each message it holds, so that the SDK knows the items it
    // gets back as the ones it gave (and persists only the turn's new ones).
    const given = new Map();
    let at = 0;
    for (const g of this.#history) {
      if (at + g.items.length <= this.#served) given.set(g.seq, input.slice(at, at + g.items.length));
      at += g.items.length;
    }
    const seqs = new Map([...kept].map(([seq, k]) => [k.key, seq]));
    for (const [key, , group] of own) if (seqs.has(key)) given.set(seqs.get(key), group);
    const toolNames = new Map();
    for (const item of input) if (item.type === 'function_call') toolNames.set(item.callId, item.name);
    const out = [];
    for (const [seq, m] of request.messages) {
      const original = seq === null ? undefined : kept.get(seq);
      if (original && same(original.message, m)) {
        out.push(...(given.get(seq) ?? original.items));
        continue;
      }
      for (const item of items(m, toolNames)) {
        this.#injected.add(JSON.stringify(item));
        out.push(item);
      }
    }
    return { input: out, instructions: request.system };
  }

  /** Each logged message by its sequence number: as the engine reads it, the items it came as, and its key. */
  async #kept() {
    const kept = new Map();
    for (const r of await this.session.records()) {
      if (r.kind !== 'message') continue;
      const extra = (r.opaque ?? []).filter((o) => !(o && typeof o === 'object' && 'key' in o));
      const key = (r.opaque ?? []).find((o) => typeof o?.key === 'string')?.key;
      if (extra.length) kept.set(r.seq, { message: recordMessage(r), items: extra, key });
    }
    return kept;
  }

  /** The view as the SDK's items: each entry's seq, its items, and the key of the message it was logged as. */
  async #groups() {
    const kept = await this.#kept();
    const toolNames = new Map();
    const out = [];
    for (const e of (await this.session.view()).entries) {
      const original = kept.get(e.seq);
      const group = original && same(original.message, e.message) ? original.items : items(e.message, toolNames);
      for (const item of group) if (item.type === 'function_call') toolNames.set(item.callId, item.name);
      out.push({ seq: e.seq, items: group, key: original?.key });
    }
    return out;
  }

  async getSessionId() {
    return (await this.session.meta()).id;
  }

  async getItems(limit = undefined) {
    const groups = await this.#groups();
    const all = groups.flatMap((g) => g.items);
    const served = limit ? all.slice(-limit) : all;
    // The next run's input starts with these; what follows is new.
    this.#served = served.length;
    this.#history = limit ? [] : groups;
    this.#base = await this.#next();
    this.#added = 0;
    this.#injected.clear();
    return served;
  }

  async addItems(items) {
    const own = items.filter((item) => !this.#injected.has(JSON.stringify(item)));
    await this.bound.log(messages(own, this.#base + this.#added));
    this.#added += own.length;
  }

  async popItem() {
    const groups = await this.#groups();
    const last = groups[groups.length - 1];
    if (!last) return undefined;
    await this.session.withdraw(await this.#replaced(last.seq), 'popItem');
    if (last.items.length > 1 && last.key) {
      // The rest of an assistant's turn stays, logged again under its key.
      const rest = messages(last.items.slice(0, -1));
      await this.session.append(rest.map(([, m]) => m), rest.map(([, , g]) => [{ key: last.key }, ...g]));
    }
    this.bound.forget();
    this.#added = Math.max(0, this.#added - 1);
    return last.items[last.items.length - 1];
  }

  async clearSession() {
    const records = await this.session.records();
    const withdrawn = new Set(records.filter((r) => r.kind === 'withdrawal').flatMap((r) => r.withdraws ?? []));
    const live = records.filter((r) => r.kind === 'message' && !withdrawn.has(r.seq)).map((r) => r.seq);
    if (live.length) await this.session.withdraw(live, 'clearSession');
    this.bound.forget();
    this.#served = this.#base = this.#added = 0;
    this.#history = [];
  }

  /**
   * The conversation's length: one past its last logged item that is not withdrawn (as logged: a
   * compaction's placeholder stands for however many items it replaced).
   */
  async #next() {
    const records = await this.session.records();
    const withdrawn = new Set(records.filter((r) => r.kind === 'withdrawal').flatMap((r) => r.withdraws ?? []));
    let end = 0;
    for (const r of records) {
      if (r.kind !== 'message' || withdrawn.has(r.seq)) continue;
      const at = /^agents:(\d+)$/.exec((r.opaque ?? []).find((o) => typeof o?.key === 'string')?.key ?? '');
      if (at) end = Math.max(end, Number(at[1]) + (r.opaque ?? []).filter((o) => !(o && typeof o === 'object' && 'key' in o)).length);
    }
    return end;
  }

  /** `seq` and, where a compaction's replacement stands in its place, all it replaced. */
  async #replaced(seq) {
    const records = await this.session.records();
    for (const r of [...records].reverse()) {
      for (const x of r.kind === 'compaction' ? r.replacements ?? [] : []) if (x.replaces[0] === seq) return [...x.replaces];
    }
    return [seq];
  }
}
