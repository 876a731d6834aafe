// Session directories for Node (`workmem/session`): the same files the CLI writes (docs/cli.md,
// "Sessions on disk"), committed as the CLI does ("One commit path"): each whole-file write a
// temp file renamed into place, and a commit written whole to commit.pending.json first, so
// that a crash at any moment leaves a session that loads (the next lock holder, in any
// runtime, finishes it). The message log (messages.jsonl) likewise: appended whole lines,
// synced, a line a crash cut short dropped by the next writer. Every write is made holding the
// session's lock: Node has no file locks, so it takes the half of the lock every runtime
// takes, `.lock.holder` (host/store/src/holder.rs says how; the CLI, Python and Go take it
// after their `flock` of `.lock`), and one process's writers take turns before that. Node has
// no openat either: files are opened by path, refusing a symlink in the last component and
// checking each folder on the way is a real folder first.
import { randomBytes, createHash } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { link, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { Memory, applyReplacements, now, overviewTemplate } from './index.js';

export const FORMAT = 'workmem-session/1';
const META = 'meta.json';
const STATE = 'state.json';
const LOG = 'updates.jsonl';
const PENDING = 'commit.pending.json';
const MESSAGES = 'messages.jsonl';
const LOCK = '.lock';
const HOLDER = '.lock.holder';
const BREAK = '.lock.holder.break';
// The lock's protocol and its timings are host/store/src/holder.rs's: how long a holder file
// may stay empty before it counts as a crash's, a break may take before its breaker counts as
// gone, a writer waits for the lock at most, and how often a waiting writer looks again.
const EMPTY_STALE_MS = 2000;
const BREAK_STALE_MS = 2000;
export const LOCK_WAIT_MS = 60_000;
const POLL_MS = 5;
// Each session directory's last writer in this process, whom the next one waits for.
const turns = new Map();
const MEMORY_DIR = 'working-memory';
const OVERVIEW = 'working-memory/overview.md';
const ID = /^(?!\.)[A-Za-z0-9._-]{1,128}$/;
const VERSION = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version;

/** The folder the CLI files a working directory's sessions under: `/home/me/app` is `--home-me-app--`. */
export const encodeCwd = (cwd) => `--${cwd.replace(/^[/\\]+/, '').replace(/[/\\:]/g, '-')}--`;

/** A message as the log keeps it (the CLI's `Message`): empty fields left out. */
function messageJson(m) {
  const out = { role: m.role, content: m.content };
  if (m.toolCalls?.length) out.tool_calls = m.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
  if (m.toolCallId) out.tool_call_id = m.toolCallId;
  return out;
}

/** A log record's message as the engine takes it. */
export const recordMessage = (r) => ({
  role: r.role,
  content: r.content,
  toolCallId: r.tool_call_id ?? undefined,
  toolCalls: (r.tool_calls ?? []).map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
});

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
  // What this handle read of the log: the file's identity, the bytes and lines read, the
  // records; and how far it folded them into the view.
  #readTo = { ino: -1, offset: 0, lines: 0, records: [] };
  #folded = { records: 0, entries: [], last: null };

  /** @param {string} dir */
  constructor(dir) {
    this.dir = dir;
  }

  /**
   * A new session under the sessions root `root` (the CLI's `--sessions-dir`), filed under its
   * working directory's folder as the CLI files it, so that `workmem session list`, `workmem
   * view` and `workmem serve` find it; with a fresh ID (or `id`, refused when taken) and the
   * engine's template for its memory. meta.json is written last: its format marker is what
   * makes the directory a session.
   */
  static async create(root, { id = undefined, cwd = process.cwd() } = {}) {
    if (id !== undefined && !ID.test(id)) {
      throw new SessionError(`${JSON.stringify(id)} is not a session ID: letters, digits, '-', '_' and '.', at most 128, not starting with '.'`);
    }
    const folder = join(root, encodeCwd(cwd));
    await mkdir(folder, { recursive: true });
    let dir;
    for (let tries = 0; dir === undefined && tries < 64; tries++) {
      const name = id ?? `${now().replace(/\D/g, '').slice(0, 8)}-${now().replace(/\D/g, '').slice(8, 14)}-${randomBytes(2).toString('hex')}`;
      try {
        await mkdir(join(folder, name));
        dir = join(folder, name);
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
        if (id !== undefined) throw new SessionError(`a session ${JSON.stringify(id)} exists already in ${folder}`);
      }
    }
    if (dir === undefined) throw new SessionError(`no fresh session ID was free in ${folder}`);
    const session = new Session(dir);
    await mkdir(join(dir, MEMORY_DIR));
    await session.#memoryDir();
    for (const sub of ['detail', 'archive']) await mkdir(join(dir, MEMORY_DIR, sub));
    const template = overviewTemplate();
    await session.#write(OVERVIEW, template);
    for (const empty of [MESSAGES, LOG, LOCK]) await session.#write(empty, '');
    const at = now();
    await session.#write(META, pretty({
      format: FORMAT, id: dir.slice(folder.length + 1), cwd, created_at: at, updated_at: at, updates: 0,
      workmem_version: VERSION, rounds: 0, memory_updated_round: 0, token_correction: 0,
      uid: randomBytes(16).toString('hex'),
      memory_chain: { shown: template, to: createHash('sha256').update(template).digest('hex') },
    }));
    return session;
  }

  // --- the message log (messages.jsonl), as the CLI keeps it ---------------------------------

  /**
   * Appends `messages` to the log, numbered on from its last record, in one write synced
   * before it returns; gives their sequence numbers. `opaque`, one array a message where given,
   * keeps parts of each in its framework's own shape that the session never reads and gives
   * back as they came.
   */
  async append(messages, opaque = []) {
    const at = now();
    const records = await this.#locked(() => this.#appendLog((last) => messages.map((m, i) => {
      const record = { seq: last + i + 1, at, kind: 'message', ...messageJson(m) };
      if (opaque[i]?.length) record.opaque = opaque[i];
      return record;
    })));
    return records.map((r) => r.seq);
  }

  /**
   * Every whole record of the log, oldest first (one a crash cut short is not one). A line
   * that does not parse is an error naming messages.jsonl, its line and column. Only what was
   * appended since this handle last read is read.
   */
  async records() {
    let file;
    try {
      file = await this.#open(MESSAGES, constants.O_RDONLY);
    } catch (e) {
      if (notFound(e)) return [];
      throw e;
    }
    let data;
    let { ino, offset, lines, records } = this.#readTo;
    try {
      const st = await file.stat();
      if (st.ino !== ino || st.size < offset) {
        ({ ino, offset, lines, records } = { ino: st.ino, offset: 0, lines: 0, records: [] });
        this.#folded = { records: 0, entries: [], last: null };
      }
      data = Buffer.alloc(st.size - offset);
      if (data.length) await file.read(data, 0, data.length, offset);
    } finally {
      await file.close();
    }
    const whole = data.subarray(0, data.lastIndexOf(0x0a) + 1);
    records = [...records];
    const text = whole.toString('utf8').split('\n').slice(0, -1);
    text.forEach((line, i) => {
      if (!line.trim()) return;
      let record;
      try {
        record = JSON.parse(line);
      } catch (e) {
        const at = /position (\d+)/.exec(e.message);
        throw this.#fail(MESSAGES, `${lines + i + 1}:${at ? Number(at[1]) + 1 : 1}: ${e.message}`, ':');
      }
      if (record === null || typeof record !== 'object' || !Number.isInteger(record.seq) || !['message', 'compaction', 'withdrawal'].includes(record.kind)) {
        throw this.#fail(MESSAGES, `${lines + i + 1}:1: not a log record (seq, kind message, compaction or withdrawal)`, ':');
      }
      records.push(record);
    });
    this.#readTo = { ino, offset: offset + whole.length, lines: lines + text.length, records };
    return records;
  }

  /**
   * The history the model sees: the log's messages with each compaction's replacements in
   * place of what they replace, by the engine's rule (`applyReplacements`), and the last
   * compaction folded in (its `notice` is what the next request tells). Folded on from where
   * this handle last folded.
   */
  async view() {
    const records = await this.records();
    let { records: folded, entries, last } = this.#folded;
    if (folded > records.length) ({ records: folded, entries, last } = { records: 0, entries: [], last: null });
    entries = [...entries];
    for (const r of records.slice(folded)) {
      if (r.kind === 'message') {
        entries.push({ seq: r.seq, message: recordMessage(r), tokens: 0 });
      } else if (r.kind === 'withdrawal') {
        const withdrawn = new Set(r.withdraws);
        entries = entries.filter((e) => !withdrawn.has(e.seq));
      } else {
        entries = applyReplacements(entries, r.replacements.map((x) => ({ replaces: x.replaces, message: recordMessage(x.message) })));
        last = r;
      }
    }
    this.#folded = { records: records.length, entries, last };
    return { entries: entries.map((e) => ({ ...e })), lastCompaction: last };
  }

  /** The messages logged with sequence numbers `first` to `last`, as logged, whatever compacted them since. */
  async originals([first, last]) {
    return (await this.records()).filter((r) => r.kind === 'message' && r.seq >= first && r.seq <= last)
      .map((r) => ({ seq: r.seq, message: recordMessage(r), tokens: 0 }));
  }

  /**
   * Appends a compaction the engine planned (`fallback` or `compact`) to the log, its archive
   * text first to `archiveTo` under working-memory/ (a crash between the two leaves text
   * nothing points to yet, and the history as it was); gives its sequence number.
   */
  async logCompaction(compaction, options = {}) {
    return this.#locked(() => this.#logCompaction(compaction, options));
  }

  async #logCompaction(compaction, { target = 'fallback', strategy = 'archive', archiveTo = undefined }) {
    let archive;
    if (compaction.archive) {
      if (!archiveTo?.startsWith(`${MEMORY_DIR}/`)) throw new SessionError(`the archive goes under ${MEMORY_DIR}/, not ${JSON.stringify(archiveTo)}`);
      await this.#appendBeneath(archiveTo, compaction.archive);
      archive = archiveTo;
    }
    const round = (await this.meta()).rounds ?? 0;
    const at = now();
    const [record] = await this.#appendLog((last) => [{
      seq: last + 1, at, kind: 'compaction', target, strategy,
      replacements: compaction.replacements.map((r) => ({ replaces: r.replaces, message: messageJson(r.message) })),
      ...(archive ? { archive } : {}),
      notice: compaction.notice, tokens_before: compaction.tokensBefore, tokens_after: compaction.tokensAfter, round,
    }]);
    return record.seq;
  }

  /**
   * Takes the messages logged as `seqs` out of the view (an application's undo: an Agents SDK
   * session's `popItem`, `clearSession`) by appending a record that says so: the log still holds
   * them, and `read_history` still reads them. Gives the record's number.
   */
  async withdraw(seqs, reason) {
    const at = now();
    const [record] = await this.#locked(() => this.#appendLog((last) => [{ seq: last + 1, at, kind: 'withdrawal', withdraws: seqs, reason }]));
    return record.seq;
  }

  /** One more request to the model (meta.json's `rounds`): what the reminder counts rounds by. */
  async countRound() {
    await this.#locked(async () => {
      const meta = await this.meta();
      meta.rounds = (meta.rounds ?? 0) + 1;
      await this.#write(META, pretty(meta));
    });
  }

  /** How many lines the archive file `archiveTo` (under working-memory/) holds: `fallback`'s `archiveLines`. */
  async archiveLines(archiveTo) {
    const text = await this.#readBeneath(archiveTo).catch((e) => { if (notFound(e)) return ''; throw e; });
    // A torn last line counts: the next append ends it first.
    return text.split('\n').length - (text === '' || text.endsWith('\n') ? 1 : 0);
  }

  /**
   * Runs `f` holding the session's lock, after finishing a commit a crash interrupted: this
   * process's writers of the directory one at a time, then the holder file.
   */
  async #locked(f) {
    const key = resolve(this.dir);
    const before = turns.get(key) ?? Promise.resolve();
    let done;
    const released = new Promise((resolve) => { done = resolve; });
    const mine = before.then(() => released);
    turns.set(key, mine);
    await before;
    try {
      await this.#claim();
      try {
        await this.#finishPending();
        return await f();
      } finally {
        // Not synced: a holder file a crash brings back names a dead process, and is broken.
        await unlink(join(this.dir, HOLDER)).catch(() => {});
      }
    } finally {
      done();
      if (turns.get(key) === mine) turns.delete(key);
    }
  }

  /**
   * Takes the holder file, waiting while a live process holds it, at most LOCK_WAIT_MS; one
   * whose writer is provably gone is broken, one writer at a time (host/store/src/holder.rs
   * says how).
   */
  async #claim() {
    const start = started(process.pid);
    const claim = `${process.pid} ${randomBytes(8).toString('hex')}${start === undefined ? '' : `@${start}`}\n`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    // Taken whole: the words go to a spare file first, made once, which each try links as the
    // holder file (refused where it is taken), so no writer ever sees one empty or half written.
    const spare = join(this.dir, `.${HOLDER}.tmp-${process.pid}-${temps++}`);
    const file = await open(spare, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await file.writeFile(claim);
    } finally {
      await file.close();
    }
    try {
      for (;;) {
        try {
          await link(spare, join(this.dir, HOLDER));
          return;
        } catch (e) {
          if (e.code !== 'EEXIST') throw this.#fail(HOLDER, e.message);
        }
        const seen = await this.#look(HOLDER);
        if (seen === undefined) continue;
        if (gone(seen)) {
          await this.#break(seen);
          continue;
        }
        if (Date.now() >= deadline) throw new SessionError(`session ${this.dir} is busy: waited ${LOCK_WAIT_MS / 1000} s for its lock, which ${describe(seen)}`);
        await sleep(POLL_MS);
      }
    } finally {
      await unlink(spare).catch(() => {});
    }
  }

  /**
   * `name` (the holder file or its break link) as it is now; undefined where it is not there.
   * Anything but a regular file is no holder any writer makes: refused at once.
   */
  async #look(name) {
    let file;
    try {
      file = await this.#open(name, constants.O_RDONLY);
    } catch (e) {
      if (notFound(e)) return undefined;
      throw new SessionError(`${e.message}: no workmem writer made it; remove it`);
    }
    try {
      const info = await file.stat({ bigint: true });
      const bytes = Buffer.alloc(256);
      const { bytesRead } = await file.read(bytes, 0, bytes.length, 0);
      const at = Date.now();
      return { text: bytes.subarray(0, bytesRead).toString('utf8'), inode: info.ino, modifiedMs: at - Number(info.mtimeMs), changedMs: at - Number(info.ctimeMs) };
    } finally {
      await file.close();
    }
  }

  /**
   * Breaks the holder file `seen`, judged a crash's, unless another writer is breaking one: it
   * is linked as the break link first, and removed only if that link is the very file judged.
   */
  async #break(seen) {
    try {
      await link(join(this.dir, HOLDER), join(this.dir, BREAK));
    } catch (e) {
      if (notFound(e)) return;
      if (e.code !== 'EEXIST') throw this.#fail(BREAK, e.message);
      const other = await this.#look(BREAK);
      if (other !== undefined && other.changedMs > BREAK_STALE_MS) await unlink(join(this.dir, BREAK)).catch(() => {});
      await sleep(POLL_MS);
      return;
    }
    try {
      const same = (x) => x !== undefined && x.inode === seen.inode && x.text === seen.text;
      if (same(await this.#look(BREAK)) && same(await this.#look(HOLDER))) await unlink(join(this.dir, HOLDER)).catch((e) => { if (!notFound(e)) throw e; });
    } finally {
      await unlink(join(this.dir, BREAK)).catch(() => {});
    }
  }

  /** Appends the records `make(lastSeq)` gives, as whole lines, synced; a line a crash cut short is dropped first. */
  async #appendLog(make) {
    const last = await this.#lastSeq(true, MESSAGES);
    const records = make(last);
    const log = await this.#open(MESSAGES, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
    try {
      await log.write(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await log.sync();
    } finally {
      await log.close();
    }
    return records;
  }

  /** `relative` (under working-memory/), each folder on the way a real folder. */
  async #readBeneath(relative) {
    await this.#foldersBeneath(relative);
    return this.#read(relative);
  }

  /** Checks that each folder above `relative` is one (never a symlink). */
  async #foldersBeneath(relative) {
    const parts = relative.split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..')) throw new SessionError(`${JSON.stringify(relative)} is not a path beneath ${MEMORY_DIR}/`);
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const info = await lstat(join(this.dir, dir)).catch((e) => { if (notFound(e)) throw e; throw this.#fail(dir, e.message); });
      if (!info.isDirectory()) throw this.#fail(dir, 'is not a folder (a symlink is never followed)');
    }
  }

  /**
   * Appends `text` to the archive file `relative`, synced: an archive grows by appending, so a
   * compaction costs what it archives, not all that was archived before it. A tail a crash
   * left torn (no newline) is ended first, so the lines the engine cites are the file's.
   */
  async #appendBeneath(relative, text) {
    await this.#foldersBeneath(relative);
    const file = await this.#open(relative, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
    let created;
    try {
      const { size } = await file.stat();
      created = size === 0;
      let data = Buffer.from(text, 'utf8');
      if (size > 0) {
        const last = Buffer.alloc(1);
        await file.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) data = Buffer.concat([Buffer.from('\n'), data]);
      }
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    if (created) {
      // A new file's name, durable before the log points to it.
      const slash = relative.lastIndexOf('/');
      const dir = await open(join(this.dir, relative.slice(0, slash + 1) || '.'), constants.O_RDONLY | constants.O_DIRECTORY);
      await dir.sync().finally(() => dir.close());
    }
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
    return this.#locked(() => this.#loadMemory());
  }

  async #loadMemory() {
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
    return this.#locked(async () => {
      const applied = (await this.#loadMemory()).apply(text, { at, overview: true, state: true });
      await this.#commit(applied);
      return applied;
    });
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
    await this.#locked(() => this.#commit(applied));
  }

  async #commit(applied) {
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
   * The seq of the last whole record of the update log (or `name`'s) (0 for none). A record a crash cut short
   * (no newline yet) was never committed: with `truncate` it is dropped first.
   */
  async #lastSeq(truncate, name = LOG) {
    let file;
    try {
      file = await this.#open(name, truncate ? constants.O_RDWR : constants.O_RDONLY);
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

  #fail(name, why, separator = ': ') {
    return new SessionError(`${join(this.dir, name)}${separator}${why}`);
  }
}

/**
 * When process `pid` started, in clock ticks after boot (/proc/<pid>/stat's 22nd field): with
 * the pid it names one process, where a pid alone is reused (a restarted container's PID 1).
 * undefined where /proc does not tell.
 */
function started(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const field = stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[19];
    return /^\d+$/.test(field ?? '') ? field : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a holder file's writer is provably gone, as a writer without flock sees it. */
function gone(seen) {
  const words = seen.text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return seen.modifiedMs > EMPTY_STALE_MS;
  const pid = Number(words[0]);
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0x7fffffff) return true;
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: alive, someone else's.
    if (e.code === 'ESRCH') return true;
  }
  const said = words[1]?.includes('@') ? words[1].slice(words[1].indexOf('@') + 1) : undefined;
  const now = started(pid);
  return said !== undefined && now !== undefined && said !== now;
}

/** What holds the lock, for the error of a wait that ran out. */
function describe(seen) {
  const pid = (seen.text.split(/\s+/).filter(Boolean)[0] ?? 'none').slice(0, 20);
  return `process ${pid}, alive, has held its holder file (${HOLDER}) for ${Math.round(seen.changedMs / 1000)} s; if no workmem writer runs as ${pid}, remove ${HOLDER}`;
}
