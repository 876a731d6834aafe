// Session directories as the CLI writes them: the shared fixture (tests/data/session)
// committed byte for byte, a crash's pending commit finished, refused commits changing nothing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session, SessionError } from '../session.js';
import { WorkmemError, assemble, contextMeta, fallback, overviewMaintained } from '../index.js';

const fixture = fileURLToPath(new URL('../../../tests/data/session/', import.meta.url));
const at = '2026-11-23T12:00:00Z';
const fixtureFiles = ['state.json', 'updates.jsonl', 'working-memory/overview.md', 'meta.json'];
// Every directory these tests make, removed when they end.
const scratch = await mkdtemp(join(tmpdir(), 'workmem-js-session-'));
after(() => rm(scratch, { recursive: true, force: true }));

/** A fixture file, meta.json's updated_at (the committer's clock) aside. @param {string} dir @param {string} name */
async function fixtureBytes(dir, name) {
  const text = await readFile(join(dir, name), 'utf8');
  if (name !== 'meta.json') return text;
  return text.trimEnd().split('\n').filter((l) => !l.trimStart().startsWith('"updated_at"')).join('\n');
}

async function copy() {
  const dir = join(await mkdtemp(join(scratch, 'session-')), 's');
  await cp(join(fixture, 'before'), dir, { recursive: true });
  return dir;
}

/** @param {string} dir */
async function allFiles(dir) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out[join(e.parentPath, e.name)] = await readFile(join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

/** @param {string} dir @param {string} how */
async function checkAfter(dir, how) {
  for (const name of fixtureFiles) {
    assert.equal(await fixtureBytes(dir, name), await fixtureBytes(join(fixture, 'after'), name), `${name}, ${how}`);
  }
  await assert.rejects(readFile(join(dir, 'commit.pending.json')), { code: 'ENOENT' });
}

const update = () => readFile(join(fixture, 'update.dsl'), 'utf8');

test('the shared fixture commits byte for byte', async () => {
  const dir = await copy();
  const session = await Session.open(dir);
  const applied = await session.apply(await update(), { at });
  assert.equal(applied.seq, 2);
  assert.equal(await session.overview(), applied.overview);
  await checkAfter(dir, 'committed');
});

test('a pending commit from any runtime is finished on load', async () => {
  const dir = await copy();
  await cp(join(fixture, 'pending.json'), join(dir, 'commit.pending.json'));
  const memory = await (await Session.open(dir)).loadMemory();
  assert.equal(memory.snapshot().updates, 2);
  await checkAfter(dir, 'from the pending commit');
});

test('stale and invalid commits and symlinks are refused, changing nothing', async () => {
  await assert.rejects(Session.open(tmpdir()), /not a session/);
  const dir = await copy();
  const session = await Session.open(dir);
  const [first, second] = [await session.loadMemory(), await session.loadMemory()];
  await session.commit(first.apply(await update(), { at, overview: true, state: true }));
  let before = await allFiles(dir);
  const stale = second.apply('KEY_LEARNINGS:\n  ADD:\n    - because it races: a second writer\n', { at, overview: true, state: true });
  await assert.rejects(session.commit(stale), (e) => e instanceof SessionError && /another writer committed/.test(e.message));
  // apply commits: committing what it returned again says so, and changes nothing.
  const done = await session.apply('KEY_LEARNINGS:\n  ADD:\n    - because it is one step: apply commits\n', { at });
  before = await allFiles(dir);
  await assert.rejects(session.commit(done), (e) => e instanceof SessionError && /update 3 is already committed: apply\(\) commits what it applies/.test(e.message));
  assert.deepEqual(await allFiles(dir), before);
  await assert.rejects(session.apply('KEY_LEARNINGS:\n  ADD:\n    - no reason\n'), (e) => e instanceof WorkmemError && /first at 3:7/.test(e.message));

  const outside = await mkdtemp(join(scratch, 'outside-'));
  await writeFile(join(outside, 'overview.md'), 'secret\n');
  await rm(join(dir, 'working-memory'), { recursive: true });
  await symlink(outside, join(dir, 'working-memory'));
  delete before[join(dir, 'working-memory', 'overview.md')];
  await assert.rejects(session.overview(), /symlink is never followed/);
  await assert.rejects(session.apply(await update()), SessionError);
  assert.deepEqual(await allFiles(dir), before);
  assert.equal(await readFile(join(outside, 'overview.md'), 'utf8'), 'secret\n');
});

test('a request is assembled with context_meta last', () => {
  const messages = assemble({ systemPrompt: 'You help.', overview: '# Overview\nFixing units.py\n', history: [{ role: 'user', content: 'hi' }], historyMode: 'last-n', lastN: 3 });
  assert.deepEqual(messages.map((m) => m.role), ['system', 'system', 'user']);
  // A memory with nothing in it yet is not sent.
  const empty = assemble({ systemPrompt: 'You help.', overview: '# Overview\n', history: [{ role: 'user', content: 'hi' }], historyMode: 'all' });
  assert.deepEqual(empty.map((m) => m.role), ['system', 'user']);
  assert.match(messages[0].content, /^You help\.\n\n## Working Memory/);
  assert.equal(contextMeta({ tokensUsed: 100, tokensMax: 1000, compactAt: 750 }), '<context_meta>\n{"tokens_used":100,"tokens_percent":10}\n</context_meta>');
  assert.match(contextMeta({ tokensUsed: 100, tokensMax: 1000, compactAt: 750, compactionNotice: 'History was compacted.' }), /"auto_compact_at":750}\nHistory was compacted\./);
  assert.equal(overviewMaintained('# Overview\n\nWe found the bug in units.py.\n'), true);
});

// The session's lock across runtimes: Node takes `.lock.holder` (host/store/src/holder.rs), the
// CLI takes it after its flock of `.lock`; `make test-js` names the CLI in WORKMEM_BIN.
const cli = process.env.WORKMEM_BIN;
/** @param {string} who @param {number} i */
const learned = (who, i) => `KEY_LEARNINGS:\n  ADD:\n    - because it races: ${who} fact ${i}\n`;

test("one process's writers take turns: every append numbered once", async () => {
  const session = await Session.open(await copy());
  const seqs = await Promise.all(Array.from({ length: 30 }, (_, i) => session.append([{ role: 'user', content: `m${i}`, toolCalls: [] }])));
  assert.deepEqual(seqs.flat().sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1));
  const applied = await Promise.all(Array.from({ length: 5 }, (_, i) => session.apply(learned('node', i), { at })));
  assert.deepEqual(applied.map((a) => a.seq).sort(), [2, 3, 4, 5, 6]);
  await assert.rejects(readFile(join(session.dir, '.lock.holder')), { code: 'ENOENT' });
});

test("a live process's holder file holds a write; a gone one's, or an old empty one, is broken", async () => {
  const session = await Session.open(await copy());
  const other = spawn('sleep', ['30']);
  await writeFile(join(session.dir, '.lock.holder'), `${other.pid} 0123\n`);
  let landed = false;
  const write = session.append([{ role: 'user', content: 'waits', toolCalls: [] }]).then((s) => { landed = true; return s; });
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(landed, false, 'the write waits while the holder lives');
  other.kill();
  await new Promise((resolve) => other.once('exit', resolve));
  assert.deepEqual(await write, [1]);
  await writeFile(join(session.dir, '.lock.holder'), '');
  await utimes(join(session.dir, '.lock.holder'), new Date(Date.now() - 10_000), new Date(Date.now() - 10_000));
  assert.deepEqual(await session.append([{ role: 'user', content: 'after a crash', toolCalls: [] }]), [2]);
});

test('a holder by a reused number is broken; what is no holder file is refused at once', async () => {
  const session = await Session.open(await copy());
  const holder = join(session.dir, '.lock.holder');
  // Node as PID 1 in a container, restarted: the holder names this very number, from a
  // process that started at another time.
  const stat = await readFile(`/proc/${process.pid}/stat`, 'latin1');
  const start = Number(stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[19]);
  await writeFile(holder, `${process.pid} 0123@${start + 1}\n`);
  assert.deepEqual(await session.append([{ role: 'user', content: 'after a restart', toolCalls: [] }]), [1]);
  const plants = [() => symlink('/etc/hostname', holder), () => promisify(execFile)('mkfifo', [holder]), () => mkdir(holder)];
  for (const plant of plants) {
    await plant();
    const began = Date.now();
    await assert.rejects(session.append([{ role: 'user', content: 'refused', toolCalls: [] }]), (e) => e instanceof SessionError && /no workmem writer made it; remove it/.test(e.message));
    assert.ok(Date.now() - began < 5000);
    await rm(holder, { recursive: true });
  }
});

test('Node and the CLI commit to one session at once: every update lands, each once', async () => {
  if (!cli) throw new Error('WORKMEM_BIN names the CLI (make test-js sets it)');
  const dir = await copy();
  const session = await Session.open(dir);
  const run = promisify(execFile);
  const viaCli = Array.from({ length: 8 }, (_, i) => {
    const child = run(cli, ['--json', 'apply', '--session', dir, '-']);
    child.child.stdin?.end(learned('cli', i));
    return child;
  });
  const viaNode = Array.from({ length: 8 }, (_, i) => session.apply(learned('node', i), { at }));
  await Promise.all([...viaCli, ...viaNode]);
  const log = (await readFile(join(dir, 'updates.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l).seq);
  assert.deepEqual(log, Array.from({ length: 17 }, (_, i) => i + 1), 'one record a commit, numbered in turn');
  const overview = await session.overview();
  for (let i = 0; i < 8; i++) {
    assert.match(overview, new RegExp(`cli fact ${i}\\b`));
    assert.match(overview, new RegExp(`node fact ${i}\\b`));
  }
  assert.equal((await session.meta()).updates, 17);
});

test('read_history checks the numbers a model sends and caps what it echoes', async () => {
  const { Bound } = await import('../bound.js');
  const session = await Session.open(await copy());
  await session.append([{ role: 'user', content: 'Read it back.', toolCalls: [] }]);
  const bound = new Bound(session);
  const whole = await bound.answer('read_history', { seq: '1' });
  assert.match(whole, /^### #1 /);
  // 2 ** 32 + 5 once read message 1 from byte 5: a 32-bit wrap.
  for (const bad of [2 ** 32 + 5, -1, 1.5, true, '5']) {
    assert.equal(await bound.answer('read_history', { seq: '1', from: bad }), 'error: read_history needs a non-negative integer argument "from"', String(bad));
  }
  const refused = await bound.answer('read_history', { seq: 'x'.repeat(200_000) });
  assert.ok(refused.startsWith('error: seq must be') && refused.length < 200, String(refused.length));
});

test('an archive grows by appending', async () => {
  const session = await Session.create(await mkdtemp(join(scratch, 'archive-')), { cwd: '/projects/app' });
  const archiveTo = 'working-memory/detail/history.md';
  const path = join(session.dir, archiveTo);
  const steps = (/** @type {number} */ from) => Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `step ${from + i}: ${'x'.repeat(400)}`, toolCalls: [] }));
  const compact = async () => {
    const { entries } = await session.view();
    for (const e of entries) e.tokens = Math.floor(e.message.content.length / 3) + 4;
    const used = entries.reduce((n, e) => n + e.tokens, 0);
    const planned = fallback(entries, { used, threshold: Math.floor(used / 2), goal: Math.floor(used / 3), keepRecent: 2, archiveTo, archiveLines: await session.archiveLines(archiveTo) });
    assert.ok(planned?.archive, 'a compaction with an archive');
    await session.logCompaction(planned, { archiveTo });
  };
  await session.append(steps(0));
  await compact();
  const first = await readFile(path, 'utf8');
  const { ino } = await stat(path);
  await session.append(steps(8));
  await compact();
  assert.equal((await stat(path)).ino, ino, 'appended to, not rewritten');
  assert.ok((await readFile(path, 'utf8')).startsWith(first));
  // A tail a crash tore: counted as a line, and ended before the next text.
  await appendFile(path, 'torn');
  const lines = await session.archiveLines(archiveTo);
  assert.equal(lines, (await readFile(path, 'utf8')).split('\n').length);
  await session.append(steps(16));
  await compact();
  const text = (await readFile(path, 'utf8')).split('\n');
  assert.equal(text[lines - 1], 'torn');
  assert.notEqual(text[lines], '');
});
