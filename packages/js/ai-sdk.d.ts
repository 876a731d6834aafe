// Types of `workmem/ai-sdk` (Node only).
import type { LanguageModelMiddleware } from 'ai';
import type { Session } from './session.js';
import type { BoundOptions } from './bound.js';

export interface WorkmemMiddlewareOptions extends BoundOptions {
  /** The workmem session the agent's messages are logged to (`Session.create` or `Session.open`). */
  session: Session;
}

/**
 * A middleware for `wrapLanguageModel`: every call bounded to the window through a workmem
 * session (its compactions reversible with `read_history`), the memory and `context_meta` in
 * the request, and workmem's own tools answered inside the middleware. Throws WorkmemError for
 * a request no compaction brings under the window, rather than sending it.
 */
export function workmemMiddleware(options: WorkmemMiddlewareOptions): LanguageModelMiddleware & { specificationVersion: 'v4' };
