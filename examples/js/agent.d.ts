// Types of the agent-world wrapper; the report's type comes from the WIT through jco.
import type { MemoryUpdateReport } from './gen-agent/agent.js';

export type { MemoryUpdateReport } from './gen-agent/agent.js';

export interface Message {
  role: string;
  content: string;
}

export type LlmError = { tag: 'timeout' } | { tag: 'rate-limited' } | { tag: 'http-status'; val: number } | { tag: 'other'; val: string };
export type StoreError = { tag: 'not-found' } | { tag: 'refused'; val: string } | { tag: 'other'; val: string };

/** The session's files. Throw a StoreError to fail an operation. */
export interface Store {
  read(path: string): string;
  write(path: string, content: string): void;
  append(path: string, content: string): void;
}

export interface Completion {
  text: string;
  usage?: { promptTokens: number; completionTokens: number };
}

export interface Capabilities {
  /** The model's answer, as text or with its usage. Synchronous; throw an LlmError to fail. */
  llm(messages: Message[]): string | Completion;
  store: Store;
  clock?: () => string;
}

export interface Agent {
  memoryUpdate(task: string, maxReprompts?: number): MemoryUpdateReport;
}

export function loadAgent(capabilities: Capabilities): Promise<Agent>;
export function directoryStore(root: string): Store;
