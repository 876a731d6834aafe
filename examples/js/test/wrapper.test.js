// The wrapper's promises: a memory kept in the engine, refusals as WorkmemError with
// diagnostics, and the memory update driven as steps by an async model client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { chatCompletions, Memory, parse, WorkmemError } from '../index.js';

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
