// Types of `workmem/session` (Node only).
import type { Applied } from './gen/interfaces/workmem-memory-memory.js';
import type { ChatMessage } from './gen/interfaces/workmem-memory-context.js';
import type { Compaction, Entry, Memory } from './index.js';

export const FORMAT: 'workmem-session/1';

export class SessionError extends Error {}

/** meta.json, as the CLI writes it. */
export interface SessionMeta {
  format: string;
  id: string;
  cwd: string;
  created_at: string;
  updated_at: string;
  updates: number;
  workmem_version: string;
  rounds: number;
  memory_updated_round: number;
  token_correction: number;
}

/** The folder the CLI files a working directory's sessions under: `/home/me/app` is `--home-me-app--`. */
export function encodeCwd(cwd: string): string;

/** A record of the message log (messages.jsonl), as the CLI writes it. */
export interface LogRecord {
  seq: number;
  at: string;
  kind: 'message' | 'compaction' | 'withdrawal';
  withdraws?: number[];
  role?: string;
  content?: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
  tool_call_id?: string;
  /** What the writer kept of the message in its framework's shape; never read by the session. */
  opaque?: unknown[];
  replacements?: { replaces: number[]; message: { role: string; content: string } }[];
  notice?: string;
  round?: number;
  [field: string]: unknown;
}

/** The history the model sees, and the last compaction folded in. */
export interface View {
  entries: Required<Entry>[];
  lastCompaction: LogRecord | null;
}

/** A log record's message as the engine takes it. */
export function recordMessage(record: LogRecord): ChatMessage;

/** A session directory the CLI (or any runtime) made. */
export class Session {
  readonly dir: string;
  static open(dir: string): Promise<Session>;
  /** A new session under the sessions root, filed under `cwd`'s folder as the CLI files it. */
  static create(root: string, options?: { id?: string; cwd?: string }): Promise<Session>;
  /** Appends messages to the log; gives their sequence numbers. */
  append(messages: ChatMessage[], opaque?: unknown[][]): Promise<number[]>;
  /** Every whole record of the log, oldest first; a line that does not parse is an error with its line and column. */
  records(): Promise<LogRecord[]>;
  view(): Promise<View>;
  /** The messages logged with sequence numbers `first` to `last`, as logged. */
  originals(range: [number, number]): Promise<Required<Entry>[]>;
  logCompaction(compaction: Compaction, options?: { target?: string; strategy?: string; archiveTo?: string }): Promise<number>;
  /** Takes the messages logged as `seqs` out of the view; the log keeps them. */
  withdraw(seqs: number[], reason: string): Promise<number>;
  countRound(): Promise<void>;
  archiveLines(archiveTo: string): Promise<number>;
  meta(): Promise<SessionMeta>;
  overview(): Promise<string>;
  loadMemory(): Promise<Memory>;
  apply(text: string, options?: { at?: string }): Promise<Applied>;
  commit(applied: Applied): Promise<void>;
}
