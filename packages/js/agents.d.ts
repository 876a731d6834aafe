// Types of `workmem/agents` (Node only).
import type { AgentInputItem, CallModelInputFilter, FunctionTool, Session as AgentsSession } from '@openai/agents';
import type { Session } from './session.js';
import type { Bound, BoundOptions } from './bound.js';

export interface WorkmemAgentsOptions extends BoundOptions {
  /** The workmem session the run's items are logged to (`Session.create` or `Session.open`). */
  session: Session;
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
