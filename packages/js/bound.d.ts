// Types of the adapters' shared steps (internal: `workmem/ai-sdk` and `workmem/agents` use it).
import type { ChatMessage } from './gen/interfaces/workmem-memory-context.js';
import type { Bounds, ToolDefinition } from './index.js';
import type { Session } from './session.js';

/** How the adapters bound every model call. */
export interface BoundOptions {
  /** The model's context window in tokens: no request crosses it (default 128,000). */
  window?: number;
  /** The fallback compacts from this share of the window (default 0.75) ... */
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

/** A bounded request: the system prompt with the guide, then the messages (history ones with their sequence numbers). */
export interface BoundRequest {
  system: string;
  messages: [number | null, ChatMessage][];
  tokens: number;
}

export class Bound {
  readonly session: Session;
  readonly window: number;
  readonly bounds: Required<Bounds>;
  constructor(session: Session, options?: BoundOptions);
  tokens(m: ChatMessage): Promise<number>;
  toolsTokens(definitions: string): Promise<number>;
  logged(): Promise<Set<string>>;
  forget(): void;
  log(messages: [string, ChatMessage, unknown[]][]): Promise<void>;
  request(system: string, toolsTokens: number): Promise<BoundRequest>;
  tools(): ToolDefinition[];
  answer(name: string, args: Record<string, unknown>): Promise<string>;
  readHistory(seq: string, start?: number): Promise<string>;
  updateMemory(dsl: string): Promise<string>;
}
