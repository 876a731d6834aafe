// Types of `workmem/ai-sdk` (Node only).
import type { LanguageModelMiddleware } from 'ai';
import type { Session } from './session.js';

export interface WorkmemMiddlewareOptions {
  /** The workmem session the agent's messages are logged to (`Session.create` or `Session.open`). */
  session: Session;
  /** The model's context window in tokens: no request crosses it (default 128,000). */
  window?: number;
  /** The safety net compacts from this share of the window (default 0.75) ... */
  compactAt?: number;
  /** ... down to this share (default 0.5). */
  compactGoal?: number;
  /** Groups at the end kept whole (default 5). */
  keepRecent?: number;
  /** After this many model calls without a memory update the reminder insists (default 10; 0: never). */
  remindAfterRounds?: number;
  /** A token counter for another tokenizer than o200k_base (gpt-tokenizer). */
  count?: (text: string) => number;
}

/**
 * A middleware for `wrapLanguageModel`: every call bounded to the window through a workmem
 * session (its compactions reversible with `read_history`), the memory and `context_meta` in
 * the request, and workmem's own tools answered inside the middleware. Throws WorkmemError for
 * a request no compaction brings under the window, rather than sending it.
 */
export function workmemMiddleware(options: WorkmemMiddlewareOptions): LanguageModelMiddleware & { specificationVersion: 'v4' };
