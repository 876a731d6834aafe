// workmem for JavaScript: the engine component (transpiled by jco into gen/) behind plain
// objects in and out, with invalid input thrown as a WorkmemError that carries diagnostics.
import * as engine from './gen/workmem.js';

/** An update the engine refused: `diagnostics` says where and why (1-based line:column). */
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

const outcome = (o) => ({ ok: o.ok, update: o.ok ? o.update : null, diagnostics: o.diagnostics });

/** Reads a DSL update. Never throws for bad input: `ok` is false and `diagnostics` explain. */
export function parse(text) {
  return outcome(engine.parse(text));
}

/** `parse`, plus warnings for ARCHIVEs of IDs the state does not have. */
export function validate(text, state = emptyState()) {
  return outcome(engine.validate(text, state));
}

/**
 * Parses, validates and merges `text` into `state`. Returns the new state with the diff and
 * the IDs touched; throws WorkmemError (with `diagnostics`) when the update has errors.
 */
export function apply(state, text, at = now()) {
  const o = engine.apply(state, text, at);
  if (!o.ok) {
    const errors = o.diagnostics.filter((d) => d.severity === 'error');
    const first = errors[0];
    throw new WorkmemError(`the update has ${errors.length} error(s); first at ${first.line}:${first.column}: ${first.message}`, o.diagnostics);
  }
  return { ...o.merged, warnings: o.diagnostics };
}

/** Merges update objects (for example ones you built yourself) into `state`, in order. */
export function merge(state, updates, at = now()) {
  try {
    return engine.merge(state, updates, at);
  } catch (e) {
    // jco throws a result's `err` as a ComponentError whose payload is the string.
    if (typeof e?.payload === 'string') throw new WorkmemError(e.payload);
    throw e;
  }
}

export const render = (state) => engine.render(state);
export const updatePrompt = (state, task) => engine.updatePrompt(state, task);
export const overviewTemplate = () => engine.overviewTemplate();
export const emptyState = () => engine.emptyState();
