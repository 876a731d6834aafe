// `make bench-adapters` (the JavaScript half; packages/python/bench_adapters.py is the Python
// one): what the adapters' steps add to each model call at 100 and 1,000 messages in the
// session: the median time of a Chat Completions call (fetch, JSON both ways) to a model on
// loopback with the prompt as the agent holds it, and of the same call with `Bound`'s steps
// before it (log what is new, view, count, the engine's steps, the bounded request), with the
// ratio, and the steps alone, from one run. The window is wide enough that nothing is
// compacted: this is the cost of every call, not of a compaction. Prints a JSON line per size.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bound } from './bound.js';
import { Session } from './session.js';

const ANSWER = JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }] });
const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const body = [];
  req.on('data', (c) => body.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(body).toString());
    res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/chat/completions`;
const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
const file = (/** @type {number} */ k) => Array.from({ length: 8 }, (_, i) => `file_${k}.txt:${i}: value ${k * 31 + i}`).join('\n');

/** @typedef {{ role: string, content: string, toolCallId?: string, toolCalls: { id: string, name: string, arguments: string }[] }} Message */
/** @param {Message} m */
const wire = (m) => ({
  role: m.role, content: m.content,
  ...(m.toolCalls.length ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
  ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {}),
});
const call = (/** @type {string} */ system, /** @type {Message[]} */ messages) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'system', content: system }, ...messages.map(wire)], tools: TOOLS }) }).then((r) => r.json());
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const n of [100, 1000]) {
  /** @type {Message[]} */
  const history = [{ role: 'user', content: 'Read the files.', toolCalls: [] }];
  for (let i = 0; i < (n - 1) / 2; i++) {
    history.push({ role: 'assistant', content: '', toolCalls: [{ id: `s-${i + 1}`, name: 'read_file', arguments: JSON.stringify({ path: `file_${(i % 12) + 1}.txt` }) }] });
    history.push({ role: 'tool', content: file((i % 12) + 1), toolCallId: `s-${i + 1}`, toolCalls: [] });
  }
  const root = mkdtempSync(join(tmpdir(), 'workmem-bench-'));
  const bound = new Bound(await Session.create(root, { cwd: root }), { window: 10_000_000 });
  await bound.log(history.map((m, k) => [String(k), m, []]));
  await bound.request('You read files.', 0);
  /** @type {number[]} */
  const plain = [];
  /** @type {number[]} */
  const adapted = [];
  /** @type {number[]} */
  const steps = [];
  for (let k = 0; k < 21; k++) {
    history.push({ role: 'user', content: `one more ${k}`, toolCalls: [] });
    let t = performance.now();
    await call('You read files.', history);
    plain.push(performance.now() - t);
    t = performance.now();
    await bound.log([[String(history.length - 1), history[history.length - 1], []]]);
    const request = await bound.request('You read files.', await bound.toolsTokens(JSON.stringify(TOOLS)));
    steps.push(performance.now() - t);
    await call(request.system, request.messages.map(([, m]) => m));
    adapted.push(performance.now() - t);
  }
  const [p, a] = [median(plain), median(adapted)];
  console.log(JSON.stringify({ runtime: 'node', messages: n, call_ms: +p.toFixed(2), with_adapter_ms: +a.toFixed(2), ratio: +(a / p).toFixed(2), adapter_steps_ms: +median(steps).toFixed(2) }));
}
server.close();
