// Types of the wrapper; the record types come from the WIT through jco.
import type { Applied, Diagnostic, Message, Snapshot, Update } from './gen/interfaces/workmem-memory-memory.js';
import type { ChatMessage } from './gen/interfaces/workmem-memory-context.js';
import type { Strategy, Target } from './gen/interfaces/workmem-memory-history.js';

export type {
  Applied, ArchiveOp, Archival, Diagnostic, Learning, LearningAdd, LearningOps, Message, Progress, Severity, Snapshot, Update,
  VerbatimAdd, VerbatimEntry, VerbatimOps,
} from './gen/interfaces/workmem-memory-memory.js';

export type { ChatMessage, ToolCall } from './gen/interfaces/workmem-memory-context.js';
export type { Strategy, Target } from './gen/interfaces/workmem-memory-history.js';

export class WorkmemError extends Error {
  diagnostics: Diagnostic[];
  /** For a refused compaction. */
  kind?: 'nothing' | 'empty-summary' | 'invariant';
  constructor(message: string, diagnostics?: Diagnostic[], kind?: 'nothing' | 'empty-summary' | 'invariant');
}

/** One entry of a history view: a message of your log (its sequence number) or a replacement. */
export interface Entry {
  seq: number;
  message: ChatMessage;
  /** Its tokens, as your tokenizer counts them (0 if you do not count). */
  tokens?: number;
}

export interface Replacement {
  replaces: number[];
  message: ChatMessage;
}

export interface Compaction {
  replacements: Replacement[];
  archive: string;
  view: Required<Entry>[];
  messages: number;
  tokensBefore: number;
  tokensAfter: number;
  notice: string;
}

export interface CompactOptions {
  target?: Target;
  strategy?: Strategy;
  keepRecent?: number;
  archiveTo?: string;
  archiveLines?: number;
  neverCompact?: string[];
  minFree?: number;
  keep?: number[];
}

export interface FallbackOptions {
  used: number;
  threshold: number;
  goal: number;
  keepRecent?: number;
  archiveTo?: string;
  archiveLines?: number;
  neverCompact?: string[];
  keep?: number[];
}

export type AskChat = (messages: ChatMessage[]) => string | Promise<string>;

export function compact(view: Entry[], options?: CompactOptions, ask?: AskChat): Promise<Compaction>;
export function fallback(view: Entry[], options: FallbackOptions): Compaction | null;
export function applyReplacements(view: Entry[], replacements: Replacement[]): Required<Entry>[];

/** The bounds of every model call, in tokens. */
export interface Bounds {
  window: number;
  /** The fallback compacts from here ... */
  threshold: number;
  /** ... down to this. */
  goal: number;
  keepRecent?: number;
  /** After this many rounds without a memory update the reminder insists (0 or absent: never). */
  remindAfterRounds?: number;
  maxCompactions?: number;
  archiveTo?: string;
}

/** One model call's state, as the adapter knows it (wit/call.wit). */
export interface CallRequest {
  bounds: Bounds;
  systemPrompt: string;
  overview: string;
  /** The view's tokens in all, and its entries. */
  viewTokens: number;
  viewEntries: number;
  /** The session's first user message, never compacted. */
  task?: number | null;
  /** What the request adds beyond its messages: tool definitions, the reply's priming. */
  overhead?: number;
  /** The tokens of the messages this call's `count` steps asked for, in order. */
  counted?: number[];
  compactions?: number;
  exhausted?: boolean;
  /** The session's round counters and last compaction (see `remind`). */
  standing?: Standing;
}

/** Where a session stands before a model call: meta.json's counters and the log's last compaction. */
export interface Standing {
  /** Model calls made (meta.json's `rounds`). */
  rounds?: number;
  /** The round the memory last changed in (meta.json's `memory_updated_round`). */
  memoryUpdatedRound?: number;
  /** The log's last compaction: the round it was made in and what it tells the model. */
  lastCompaction?: { round: number; notice: string } | null;
}

/** What `context_meta` says of where a session stands. */
export interface Reminders {
  roundsSinceUpdate: number;
  /** The notice of a compaction no model call came after yet. */
  compactionNotice?: string;
}

/** `ContextStats`' `roundsSinceUpdate` and `compactionNotice` from where a session stands: a compaction's notice goes on the first request after it, and no later one. */
export function remind(standing: Standing): Reminders;

/** A request ready to send: `leading`, then the view, then `meta` as a system message. */
export interface Prepared {
  leading: ChatMessage[];
  meta: string;
  tokens: number;
}

export type CallStep =
  | { count: ChatMessage[]; compact?: undefined; send?: undefined }
  | { compact: Required<FallbackOptions>; count?: undefined; send?: undefined }
  | { send: Prepared; count?: undefined; compact?: undefined };

export function prepareCall(request: CallRequest): CallStep;

/** A tool the model may call; `parameters` is its arguments' JSON schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export function ownTools(): ToolDefinition[];
/** `update_memory`'s answer for an applied update, or for one refused with `errors`. */
export function updateAnswer(applied: Applied | null, errors?: Diagnostic[]): string;
export function readRange(seq: string): [number, number];
export function readAnswer(seq: string, found: Entry[], start?: number): string;

/** What parsing an update gave (the WIT's `parse-outcome`): the update, or null with the diagnostics that refused it. */
export interface ParseOutcome {
  ok: boolean;
  update: Update | null;
  diagnostics: Diagnostic[];
}

/** @deprecated The name `ParseOutcome` had before 0.3 (the WIT's, Go's and Python's name). */
export type Parsed = ParseOutcome;

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
export function parse(text: string): ParseOutcome;
export function overviewTemplate(): string;

export class Memory {
  constructor();
  static load(state: string): Memory;
  save(): string;
  validate(text: string): ParseOutcome;
  apply(text: string, options?: ApplyOptions): Applied;
  merge(updates: Update[], options?: ApplyOptions): Applied;
  render(): string;
  snapshot(): Snapshot;
  updatePrompt(task: string): string;
  update(task: string, ask: Ask, options?: UpdateOptions): Promise<Updated>;
}

export function chatCompletions(options: { baseUrl: string; model: string; apiKey?: string; fetch?: typeof fetch }): Ask;

export type HistoryMode = 'auto' | 'all' | 'active-turn' | 'last-n';

/** What one request to the model is assembled from (spec 001). */
export interface ContextRequest {
  systemPrompt: string;
  overview: string;
  /** The whole session so far, oldest first. */
  history?: Array<Omit<ChatMessage, 'toolCalls'> & { toolCalls?: ChatMessage['toolCalls'] }>;
  /** Where the active turn (its last user message) starts in `history`. */
  activeTurn?: number;
  /** 'auto' (the default): the whole history until overview.md is maintained, then the active turn. */
  historyMode?: HistoryMode;
  /** With 'last-n': how many messages, and at least the active turn. */
  lastN?: number;
  agentsMd?: string;
  overviewPath?: string;
  detailPath?: string;
}

/** The figures of a context_meta block (spec 001 US-3). */
export interface ContextStats {
  tokensUsed: number;
  tokensMax: number;
  messagesInHistory?: number;
  workingMemorySize?: number;
  roundsSinceUpdate?: number;
  remindAfterRounds?: number;
  strongReminderTokens?: number;
  compactAt?: number;
  compactionNotice?: string;
}

export function assemble(request: ContextRequest): ChatMessage[];
export function contextMeta(stats: ContextStats): string;
export function overviewMaintained(overview: string): boolean;

/** An op the board refused, in the engine's words; nothing was applied. */
export class BoardError extends Error {
  /** The rule: 'unknown-task', 'unknown-decision', 'empty', 'illegal-transition', 'waiting', 'cycle', 'closed', 'needs-review', 'too-large', 'claimed', 'invalid-op', 'not-an-ending', 'invalid-id', 'not-closed', 'own-review', 'already-approved', 'too-late'. */
  rule: string;
  /** The engine's value for it (a task ID, the cycle, the transition, ...). */
  detail: unknown;
}

/** An op as the event log records it, e.g. `{ op: 'add_task', title: 'x', description: '', depends_on: [], needs_review: false }`. */
export type BoardOp = { op: string; [field: string]: unknown };

export type BoardView =
  | 'tasks' | 'ready' | 'blocked' | 'in-progress' | 'needs-review' | 'failed' | 'stranded'
  | 'decisions' | 'discoveries' | 'artifacts' | 'nudges' | 'contributions' | 'candidates'
  | 'stale' | 'context-for-task';

/** Spec 002's shared task board, kept inside the engine. */
export class Board {
  static create(options: { id: string; name: string; goal: string; constraints?: string[]; memoryCoreRefs?: string[]; at?: string }): Board;
  static load(state: string): Board;
  save(): string;
  readonly revision: number;
  apply(actor: string, op: BoardOp | string, options?: { at?: string }): { revision: number; event: string };
  replay(event: string | object): number;
  /** The view's records as the engine serializes them (snake_case keys). */
  view(name: BoardView, arg?: string): any;
  brief(task: string): string;
}

/** A text refused as a context document, in the engine's words. */
export class DocumentError extends Error {
  rule: 'empty' | 'too-large' | 'invalid-utf8' | 'control-character' | 'noncharacter';
  line?: number;
  column?: number;
}

export interface DocumentSection {
  name: string;
  body: string;
  line: number;
}

/** Spec 004's single context document: validation and sections. */
export const contextDocument: {
  validate(text: string | Uint8Array, maxBytes: number): void;
  sections(text: string): DocumentSection[];
  section(text: string, name: string): string | undefined;
  replaceSection(text: string, name: string, body: string): string;
  template(): string;
};
