// Types of the wrapper; the record types come from the WIT through jco.
import type { Applied, Diagnostic, Message, Snapshot, Update } from './gen/interfaces/workmem-memory-memory.js';

export type {
  Applied, ArchiveOp, Archival, Diagnostic, Learning, LearningAdd, LearningOps, Message, Progress, Severity, Snapshot, Update,
  VerbatimAdd, VerbatimEntry, VerbatimOps,
} from './gen/interfaces/workmem-memory-memory.js';

export class WorkmemError extends Error {
  diagnostics: Diagnostic[];
  constructor(message: string, diagnostics?: Diagnostic[]);
}

export interface Parsed {
  ok: boolean;
  update: Update | null;
  diagnostics: Diagnostic[];
}

export interface ApplyOptions {
  /** RFC 3339 time stored on new entries (default: now). */
  at?: string;
  /** Return the new overview.md in `overview`. */
  overview?: boolean;
  /** Return the new state.json in `state`. */
  state?: boolean;
}

export interface UpdateOptions {
  maxReprompts?: number;
  at?: () => string;
  overview?: boolean;
  state?: boolean;
}

export interface Updated extends Applied {
  /** Model calls made. */
  attempts: number;
}

export type Ask = (messages: Message[]) => string | Promise<string>;

export function now(): string;
export function parse(text: string): Parsed;
export function overviewTemplate(): string;

export class Memory {
  constructor();
  static load(state: string): Memory;
  save(): string;
  validate(text: string): Parsed;
  apply(text: string, options?: ApplyOptions): Applied;
  merge(updates: Update[], options?: ApplyOptions): Applied;
  render(): string;
  snapshot(): Snapshot;
  updatePrompt(task: string): string;
  update(task: string, ask: Ask, options?: UpdateOptions): Promise<Updated>;
}

export function chatCompletions(options: { baseUrl: string; model: string; apiKey?: string; fetch?: typeof fetch }): Ask;
