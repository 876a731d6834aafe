// Session directories for Node (`workmem/session`): the same files the CLI writes (docs/cli.md,
// "Sessions on disk"), committed as the CLI does ("One commit path"): each whole-file write a
// temp file renamed into place, and a commit written whole to commit.pending.json first, so
// that a crash at any moment leaves a session that loads (the next lock holder, in any
// runtime, finishes it). Node has neither file locks nor openat: this writer does not take the
// CLI's lock (a commit is refused when another landed since the memory was loaded, but two
// writers at the same moment are not kept apart), and files are opened by path, refusing a
// symlink in the last component and checking working-memory/ is a real folder first.
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Memory, now } from './index.js';

export const FORMAT = 'workmem-session/1';
const META = 'meta.json';
const STATE = 'state.json';
const LOG = 'updates.jsonl';
const PENDING = 'commit.pending.json';
const MEMORY_DIR = 'working-memory';
const OVERVIEW = 'working-memory/overview.md';

/** A session directory that cannot be read or committed; the message says which file and why. */
export class SessionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SessionError';
  }
}

const notFound = (e) => e?.code === 'ENOENT';
let temps = 0;

/** JSON as the CLI writes its session files (serde_json's pretty form) and a newline. */
const pretty = (value) => `${JSON.stringify(value, null, 2)}\n`;

export class Session {
  /** @param {string} dir */
  constructor(dir) {
    this.dir = dir;
  }

  /** The session at `dir`; its meta.json must carry the format marker. */
  static async open(dir) {
    const session = new Session(dir);
    let meta;
    try {
      meta = await session.meta();
    } catch (e) {
      throw new SessionError(`${dir} is not a session: ${notFound(e) ? 'it has no meta.json' : e.message}`);
    }
    if (meta.format !== FORMAT) throw new SessionError(`${dir} is not a session: meta.json's format is ${JSON.stringify(meta.format)}, not "${FORMAT}"`);
    return session;
  }

  /** meta.json: format, id, cwd, times, the update count and the agent's round counters. */
  async meta() {
    return this.#json(META, await this.#read(META));
  }

  /** working-memory/overview.md, what gets injected into the prompt. */
  async overview() {
    await this.#memoryDir();
    return this.#read(OVERVIEW);
  }

  /**
   * The session's memory (a new one before the first update), after finishing a commit a
   * crash interrupted. A state.json missing after committed updates is an error.
   */
  async loadMemory() {
    await this.#finishPending();
    let state;
    try {
      state = await this.#read(STATE);
    } catch (e) {
      if (!notFound(e)) throw e;
      const updates = await this.#lastSeq(false);
      if (updates > 0) throw new SessionError(`${this.dir}: state.json is missing although ${updates} updates were committed`);
      return new Memory();
    }
    return Memory.load(state);
  }

  /**
   * Loads the memory, applies `text` (throwing WorkmemError, changing nothing, when it has
   * errors) and commits it: what `workmem apply` does. There is nothing to `commit` after it.
   */
  async apply(text, { at = now() } = {}) {
    const applied = (await this.loadMemory()).apply(text, { at, overview: true, state: true });
    await this.commit(applied);
    return applied;
  }

  /**
   * Commits an update applied to a memory `loadMemory` gave (with overview and state, as
   * Memory#update gives them): the way to see an update before it lands. Refused, changing
   * nothing, when another commit landed since, or when it is already committed.
   */
  async commit(applied) {
    if (applied.state === undefined || applied.overview === undefined) {
      throw new SessionError('a commit needs an update applied with { overview: true, state: true }');
    }
    await this.#finishPending();
    const last = await this.#lastSeq(false);
    if (applied.seq !== last + 1) {
      const committed = applied.seq === last && (await this.#read(STATE).catch(() => undefined)) === applied.state;
      throw new SessionError(committed
        ? `update ${applied.seq} is already committed: apply() commits what it applies; commit() is for an update applied to a memory from loadMemory()`
        : `update ${applied.seq} does not follow the session's last update, ${last}: another writer committed since the memory was loaded; load it again`);
    }
    // What could refuse a step refuses the commit before anything is written.
    await this.meta();
    await mkdir(join(this.dir, MEMORY_DIR)).catch((e) => { if (e.code !== 'EEXIST') throw e; });
    await this.#memoryDir();
    const commit = { seq: applied.seq, log_entry: applied.logEntry, state: applied.state, overview: applied.overview };
    await this.#write(PENDING, pretty(commit));
    await this.#finish(commit);
  }

  async #finishPending() {
    let text;
    try {
      text = await this.#read(PENDING);
    } catch (e) {
      if (notFound(e)) return;
      throw e;
    }
    await this.#finish(this.#json(PENDING, text));
  }

  /** The steps of a commit, each safe to repeat. */
  async #finish(commit) {
    if ((await this.#lastSeq(true)) < commit.seq) {
      const log = await this.#open(LOG, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
      try {
        await log.write(`${commit.log_entry}\n`);
        await log.sync();
      } finally {
        await log.close();
      }
    }
    await this.#write(STATE, commit.state);
    await this.#memoryDir();
    await this.#write(OVERVIEW, commit.overview);
    const meta = await this.meta();
    if (meta.updates !== commit.seq) {
      Object.assign(meta, { updated_at: now(), updates: commit.seq, memory_updated_round: meta.rounds ?? 0 });
      await this.#write(META, pretty(meta));
    }
    await unlink(join(this.dir, PENDING)).catch((e) => { if (!notFound(e)) throw e; });
  }

  /**
   * The seq of the update log's last whole record (0 for none). A record a crash cut short
   * (no newline yet) was never committed: with `truncate` it is dropped first.
   */
  async #lastSeq(truncate) {
    let file;
    try {
      file = await this.#open(LOG, truncate ? constants.O_RDWR : constants.O_RDONLY);
    } catch (e) {
      if (notFound(e)) return 0;
      throw e;
    }
    try {
      const { size } = await file.stat();
      // Backwards from the end, a chunk at a time, so a long log costs what its last line does.
      let start, end, body;
      for (let chunk = 8192; ; chunk *= 4) {
        start = Math.max(0, size - chunk);
        const tail = Buffer.alloc(size - start);
        await file.read(tail, 0, tail.length, start);
        end = tail.lastIndexOf(0x0a) + 1;
        body = tail.subarray(0, end).toString().trimEnd();
        if (body.includes('\n') || start === 0) break;
      }
      if (truncate && start + end < size) {
        await file.truncate(start + end);
        await file.sync();
      }
      const last = body.slice(body.lastIndexOf('\n') + 1).trim();
      return last ? JSON.parse(last).seq : 0;
    } finally {
      await file.close();
    }
  }

  async #memoryDir() {
    const info = await lstat(join(this.dir, MEMORY_DIR)).catch((e) => { throw this.#fail(MEMORY_DIR, e.code ?? e.message); });
    if (!info.isDirectory()) throw this.#fail(MEMORY_DIR, 'is not a folder (a symlink is never followed)');
  }

  /** Opens a regular file, never through a symlink (O_NONBLOCK: a FIFO cannot hang it). */
  async #open(name, flags) {
    let file;
    try {
      file = await open(join(this.dir, name), flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
    } catch (e) {
      if (notFound(e)) throw e;
      throw this.#fail(name, e.code === 'ELOOP' ? 'is a symlink, which is never followed' : e.message);
    }
    if (!(await file.stat()).isFile()) {
      await file.close();
      throw this.#fail(name, 'is not a regular file');
    }
    return file;
  }

  async #read(name) {
    const file = await this.#open(name, constants.O_RDONLY);
    try {
      return await file.readFile('utf8');
    } finally {
      await file.close();
    }
  }

  /** Replaces `name` atomically, through a temp file named as the CLI names its own. */
  async #write(name, text) {
    const slash = name.lastIndexOf('/');
    const tmp = `${name.slice(0, slash + 1)}.${name.slice(slash + 1)}.tmp-${process.pid}-${temps++}`;
    const file = await open(join(this.dir, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      try {
        await file.writeFile(text);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(join(this.dir, tmp), join(this.dir, name));
      const dir = await open(join(this.dir, name.slice(0, slash + 1) || '.'), constants.O_RDONLY | constants.O_DIRECTORY);
      await dir.sync().finally(() => dir.close());
    } catch (e) {
      await unlink(join(this.dir, tmp)).catch(() => {});
      throw e;
    }
  }

  #json(name, text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw this.#fail(name, `does not parse: ${e.message}`);
    }
  }

  #fail(name, why) {
    return new SessionError(`${join(this.dir, name)}: ${why}`);
  }
}
