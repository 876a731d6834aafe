// Types of `workmem/agents` (Node only).
import type { AgentInputItem, CallModelInputFilter, FunctionTool, Session as AgentsSession } from '@openai/agents';
import type { Session } from './session.js';
import type { Bound } from './bound.js';

export interface WorkmemAgentsOptions {
  /** The workmem session the run's items are logged to (`Session.create` or `Session.open`). */
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

export interface WorkmemAgents {
  /** For `run(agent, input, { callModelInputFilter })`: every model call of a run bounded. */
  callModelInputFilter: CallModelInputFilter;
  /** `read_history` and `update_memory`, for the agent's `tools`. */
  tools: FunctionTool[];
}

/** workmem for an `@openai/agents` agent: the filter and the tools (a `WorkmemSession`). */
export function workmemAgents(options: WorkmemAgentsOptions): WorkmemAgents;

/**
 * An `@openai/agents` `Session` over a workmem session (the conversation as its view holds it,
 * compacted; `popItem` and `clearSession` withdraw messages, the log keeps them), and the
 * `callModelInputFilter` and tools of the runs that use it.
 */
export class WorkmemSession implements AgentsSession, WorkmemAgents {
  constructor(options: WorkmemAgentsOptions);
  /** The workmem session. */
  readonly session: Session;
  readonly bound: Bound;
  readonly callModelInputFilter: CallModelInputFilter;
  readonly tools: FunctionTool[];
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<AgentInputItem[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
  popItem(): Promise<AgentInputItem | undefined>;
  clearSession(): Promise<void>;
}
