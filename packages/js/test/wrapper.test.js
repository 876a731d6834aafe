// The wrapper's promises: a memory kept in the engine, refusals as WorkmemError with
// diagnostics, and the memory update driven as steps by an async model client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { applyReplacements, chatCompletions, compact, fallback, Memory, parse, remind, WorkmemError } from '../index.js';

test('apply throws a WorkmemError that carries positioned diagnostics, and changes nothing', () => {
  const memory = new Memory();
  const before = memory.save();
  assert.throws(() => memory.apply('KEY_LEARNINGS:\n  ADD:\n    - no reason\n'), (e) => {
    assert.ok(e instanceof WorkmemError);
    assert.deepEqual(e.diagnostics.map((d) => [d.severity, d.line, d.column]), [['error', 3, 7]]);
    assert.match(e.message, /first at 3:7/);
    return true;
  });
  assert.equal(memory.save(), before);
});

test('merge turns the component err into a WorkmemError', () => {
  const update = { learnings: { add: [{ reason: ' ', text: 'x' }], archive: [] }, verbatim: { add: [], archive: [] } };
  assert.throws(() => new Memory().merge([update]), (e) => e instanceof WorkmemError && /non-empty reason/.test(e.message));
});

test('a memory round-trips through its serialized form, and only what is asked for comes back', () => {
  const memory = new Memory();
  const applied = memory.apply('KEY_LEARNINGS:\n  ADD:\n    - because a: b\n', { state: true });
  assert.equal(applied.overview, undefined);
  assert.equal(applied.state, memory.save());
  assert.equal(JSON.parse(applied.logEntry).seq, 1);
  const restored = Memory.load(memory.save());
  assert.deepEqual(restored.apply('KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because done\n').archived, ['KL-1']);
  assert.equal(restored.snapshot().learnings[0].archived?.reason, 'done');
  assert.match(restored.updatePrompt('next task'), /next task/);
  assert.equal(parse('nothing here').ok, false);
  assert.throws(() => Memory.load('{"format": "other/1"}'), WorkmemError);
});

/**
 * A loopback server speaking OpenAI's Chat Completions (non-streamed), answering in turn.
 * @param {string[]} answers
 */
async function modelServer(answers) {
  /** @type {any[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push(JSON.parse(body));
      const content = answers.shift() ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { server, requests, baseUrl: `http://127.0.0.1:${address.port}/v1` };
}

test('an async host drives the memory update over fetch: re-prompted, then applied', async () => {
  const { server, requests, baseUrl } = await modelServer(['KEY_LEARNINGS:\n  ADD:\n    - no reason\n', 'KEY_LEARNINGS:\n  ADD:\n    - because found: the fix\n']);
  try {
    const memory = new Memory();
    const updated = await memory.update('Fix the flaky test', chatCompletions({ baseUrl, model: 'test-model' }));
    assert.equal(updated.attempts, 2);
    assert.deepEqual(updated.added, ['KL-1']);
    assert.equal(updated.state, memory.save());
    assert.equal(requests.length, 2);
    assert.equal(requests[0].model, 'test-model');
    assert.match(requests[0].messages[1].content, /Fix the flaky test/);
    assert.match(requests[1].messages.at(-1).content, /line 3, column 7/);
  } finally {
    server.close();
  }
});

test('a stubborn model gives up with the diagnostics, applying nothing', async () => {
  const memory = new Memory();
  const before = memory.save();
  let calls = 0;
  await assert.rejects(memory.update('t', async () => (calls++, 'nonsense'), { maxReprompts: 1 }), (e) => {
    assert.ok(e instanceof WorkmemError && /after 2 attempts/.test(e.message) && e.diagnostics.length > 0);
    return true;
  });
  assert.equal(calls, 2);
  assert.equal(memory.save(), before);
});

// Compaction (issue 8): a tool loop, compacted by archive and by an async summary.
/** @param {number} rounds @returns {import('../index.js').Entry[]} */
const toolLoop = (rounds) => {
  /** @type {import('../index.js').Entry[]} */
  const view = [{ seq: 1, message: { role: 'user', content: 'Fix the flaky test', toolCalls: [] } }];
  for (let r = 0; r < rounds; r++) {
    const id = `call-${r}`;
    view.push({ seq: 2 + 2 * r, message: { role: 'assistant', content: `step ${r}`, toolCalls: [{ id, name: 'bash', arguments: '{}' }] }, tokens: 10 });
    view.push({ seq: 3 + 2 * r, message: { role: 'tool', content: `output ${r}\n${'x'.repeat(2000)}`, toolCallId: id, toolCalls: [] }, tokens: 500 });
  }
  return view;
};

test('compact offloads old tool outputs, keeps the pairs, and reads back from the log', async () => {
  const view = toolLoop(6);
  const done = await compact(view, { target: 'tools', keepRecent: 2 });
  assert.deepEqual(done.replacements.map((r) => r.replaces), [[3], [5], [7], [9]]);
  for (const r of done.replacements) {
    assert.match(r.message.content, /^\[offloaded output of bash: .*read_history \{"seq": "\d+"\}/);
    assert.equal(r.message.toolCallId, view.find((e) => e.seq === r.replaces[0])?.message.toolCallId);
  }
  assert.ok(done.archive.includes('output 0\n'));
  assert.ok(done.tokensAfter < done.tokensBefore);
  assert.deepEqual(applyReplacements(view, done.replacements).map((e) => [e.seq, e.message.content]), done.view.map((e) => [e.seq, e.message.content]));
  assert.equal(typeof done.view[0].seq, 'number');
});

test('compact summarizes with an async model client, and refuses with a kind', async () => {
  const view = toolLoop(5);
  /** @type {import('../index.js').ChatMessage[]} */
  let asked = [];
  const done = await compact(view, { strategy: 'summarize', keepRecent: 1 }, async (messages) => {
    asked = messages;
    return 'Goal: fix the flaky test (#1); steps 0-3 found nothing (#2-#9).';
  });
  assert.match(asked[1]?.content ?? '', /### #3 tool bash/);
  assert.ok(done.view.some((e) => e.message.content.endsWith('steps 0-3 found nothing (#2-#9).')));
  await assert.rejects(compact(view, { strategy: 'summarize', keepRecent: 1 }, async () => ' '), (e) => e instanceof WorkmemError && e.kind === 'empty-summary');
  await assert.rejects(compact(view, { keepRecent: 50 }), (e) => e instanceof WorkmemError && e.kind === 'nothing');
  assert.equal(fallback(view, { used: 100, threshold: 1000, goal: 500 }), null);
  const net = fallback(view, { used: 3000, threshold: 2000, goal: 1000, keepRecent: 1 });
  assert.match(net?.notice ?? '', /compacted automatically/);
});

test("remind carries a compaction's notice to the next request alone", () => {
  const lastCompaction = { round: 7, notice: 'Compacted #2-#3.' };
  assert.deepEqual(remind({ rounds: 7, memoryUpdatedRound: 2, lastCompaction }), { roundsSinceUpdate: 5, compactionNotice: 'Compacted #2-#3.' });
  assert.deepEqual(remind({ rounds: 8, memoryUpdatedRound: 2, lastCompaction }), { roundsSinceUpdate: 6 });
  assert.deepEqual(remind({}), { roundsSinceUpdate: 0 });
});
