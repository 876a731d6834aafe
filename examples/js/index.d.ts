// Types of the wrapper; the record types come from the WIT through jco (gen/workmem.d.ts).
import type { Diagnostic, MemoryState, MergeOutcome, Update } from './gen/workmem.js';

export type {
  ArchiveOp, ArchivedLearning, ArchivedVerbatim, Diagnostic, Learning, LearningAdd, LearningOps, MemoryState,
  MergeOutcome, Progress, Update, VerbatimAdd, VerbatimEntry, VerbatimOps,
} from './gen/workmem.js';

/** `Diagnostic.severity` is one of these. */
export type Severity = 'error' | 'warning';

export class WorkmemError extends Error {
  diagnostics: Diagnostic[];
  constructor(message: string, diagnostics?: Diagnostic[]);
}

export interface Parsed {
  ok: boolean;
  update: Update | null;
  diagnostics: Diagnostic[];
}

export interface Applied extends MergeOutcome {
  warnings: Diagnostic[];
}

export function now(): string;
export function parse(text: string): Parsed;
export function validate(text: string, state?: MemoryState): Parsed;
export function apply(state: MemoryState, text: string, at?: string): Applied;
export function merge(state: MemoryState, updates: Update[], at?: string): MergeOutcome;
export function render(state: MemoryState): string;
export function updatePrompt(state: MemoryState, task: string): string;
export function overviewTemplate(): string;
export function emptyState(): MemoryState;
