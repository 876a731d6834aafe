// The agent world with imports written in JavaScript: the memory-update step runs inside
// the component; the model is a script, the store a real directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryStore, loadAgent } from '../agent.js';
import { WorkmemError } from '../index.js';

const VALID = 'CURRENT_PROGRESS:\n  In Progress:\n    - Fixing the parser\nKEY_LEARNINGS:\n  ADD:\n    - because it matters: the bug is in parse.rs\n';
const INVALID = 'KEY_LEARNINGS:\n  ADD:\n    - no reason given\n';

function scripted(answers) {
  const calls = [];
  const llm = (messages) => {
    calls.push(messages);
    const next = answers.shift();
    if (typeof next === 'string' || next.text) return next;
    throw next; // an llm-error variant, e.g. { tag: 'timeout' }
  };
  return { llm, calls };
}

test('memory-update runs inside the component with JavaScript imports', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'workmem-agent-'));
  const { llm, calls } = scripted([INVALID, { text: VALID, usage: { promptTokens: 100, completionTokens: 20 } }]);
  const agent = await loadAgent({ llm, store: directoryStore(dir), clock: () => '2026-11-22T07:00:00Z' });
  const report = agent.memoryUpdate('Fix the parser');
  assert.equal(report.attempts, 2);
  assert.deepEqual([report.promptTokens, report.completionTokens], [100, 20]);
  assert.deepEqual(report.added, ['KL-1']);
  assert.match(calls[0][1].content, /## Latest task\n\nFix the parser/);
  assert.equal(calls[1][2].role, 'assistant');
  assert.match(calls[1][3].content, /line 3, column 7: a Key Learnings ADD bullet must start with/);
  const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'));
  assert.equal(state.learnings[0].added_at, '2026-11-22T07:00:00Z');
  assert.match(readFileSync(join(dir, 'working-memory/overview.md'), 'utf8'), /- \*\*KL-1\*\*: the bug is in parse\.rs/);
  assert.equal(readFileSync(join(dir, 'updates.jsonl'), 'utf8').trim().split('\n').length, 1);

  // A new instance reads what the first wrote: IDs go on.
  const again = await loadAgent({ llm: () => 'KEY_LEARNINGS:\n  ADD:\n    - because b: second fact\n', store: directoryStore(dir) });
  assert.deepEqual(again.memoryUpdate('next').added, ['KL-2']);
});

test('a failing model or malformed answers write nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'workmem-agent-'));
  const timeout = await loadAgent({ llm: scripted([{ tag: 'timeout' }]).llm, store: directoryStore(dir) });
  assert.throws(() => timeout.memoryUpdate('t'), (e) => e instanceof WorkmemError && /did not answer within/.test(e.message));
  const stubborn = await loadAgent({ llm: scripted([INVALID, INVALID]).llm, store: directoryStore(dir) });
  assert.throws(() => stubborn.memoryUpdate('t', 1), (e) => e instanceof WorkmemError && /still invalid after 2 attempts/.test(e.message));
  assert.ok(!existsSync(join(dir, 'state.json')) && !existsSync(join(dir, 'updates.jsonl')));
});

test('the directory store refuses paths that leave it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'workmem-store-'));
  const store = directoryStore(dir);
  mkdirSync(join(dir, 'working-memory'));
  symlinkSync(tmpdir(), join(dir, 'working-memory', 'out'));
  for (const path of ['../x', '/etc/passwd', 'a/../../x', 'working-memory/out/x', 'a\\b']) {
    assert.throws(() => store.write(path, 'x'), (e) => e.tag === 'refused', path);
  }
  assert.throws(() => store.read('missing.txt'), (e) => e.tag === 'not-found');
});
