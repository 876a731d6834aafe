// workmem for JavaScript: the engine component (transpiled by jco into gen/). A Memory lives
// inside the engine; an apply carries the DSL in and the outcome out. Refused input is thrown
// as a WorkmemError that carries the diagnostics (1-based line and column).
import { memory as engine } from './gen/workmem.js';

/** An update the engine refused: `diagnostics` says where and why. */
export class WorkmemError extends Error {
  constructor(message, diagnostics = []) {
    super(message);
    this.name = 'WorkmemError';
    this.diagnostics = diagnostics;
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
