// Types of `workmem/session` (Node only).
import type { Applied } from './gen/interfaces/workmem-memory-memory.js';
import type { Memory } from './index.js';

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

/** A session directory the CLI (or any runtime) made. */
export class Session {
  readonly dir: string;
  static open(dir: string): Promise<Session>;
  meta(): Promise<SessionMeta>;
  overview(): Promise<string>;
  loadMemory(): Promise<Memory>;
  apply(text: string, options?: { at?: string }): Promise<Applied>;
  commit(applied: Applied): Promise<void>;
}
