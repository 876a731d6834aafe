// `make bench-adapters` (the JavaScript half; packages/python/bench_adapters.py is the Python
// one): what the AI SDK middleware adds to each model call at 100 and 1,000 messages in the
// session: the median time of a Chat Completions call (fetch, JSON both ways) to a model on
// loopback with the prompt as the agent holds it, and of the same call with the middleware's
// `transformParams` before it (the prompt converted and logged where new, the view, the counts,
// the engine's steps, the bounded prompt converted back), with the ratio, and the middleware
// alone, from one run. The window is wide enough that nothing is
// compacted: this is the cost of every call, not of a compaction. Prints a JSON line per size.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workmemMiddleware } from './ai-sdk.js';
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

/** The AI SDK's prompt as a Chat Completions body's messages: what a provider does with it, on both sides alike. */
const wire = (/** @type {any[]} */ prompt) => prompt.flatMap((m) => {
  if (m.role === 'system') return [{ role: 'system', content: m.content }];
  if (m.role === 'tool') return m.content.map((/** @type {any} */ p) => ({ role: 'tool', tool_call_id: p.toolCallId, content: p.output.value }));
  const calls = m.content.filter((/** @type {any} */ p) => p.type === 'tool-call')
    .map((/** @type {any} */ p) => ({ id: p.toolCallId, type: 'function', function: { name: p.toolName, arguments: JSON.stringify(p.input) } }));
  const text = m.content.filter((/** @type {any} */ p) => p.type === 'text').map((/** @type {any} */ p) => p.text).join('');
  return [{ role: m.role, content: text, ...(calls.length ? { tool_calls: calls } : {}) }];
});
const call = (/** @type {any[]} */ prompt) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: wire(prompt), tools: TOOLS }) }).then((r) => r.json());
const TOOL = { type: 'function', name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } };
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const n of [100, 1000]) {
  /** @type {any[]} */
  const prompt = [{ role: 'system', content: 'You read files.' }, { role: 'user', content: [{ type: 'text', text: 'Read the files.' }] }];
  for (let i = 0; i < (n - 1) / 2; i++) {
    const [id, path] = [`s-${i + 1}`, `file_${(i % 12) + 1}.txt`];
    prompt.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'read_file', input: { path } }] });
    prompt.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'read_file', output: { type: 'text', value: file((i % 12) + 1) } }] });
  }
  const root = mkdtempSync(join(tmpdir(), 'workmem-bench-'));
  const middleware = workmemMiddleware({ session: await Session.create(root, { cwd: root }), window: 10_000_000 });
  const transform = (/** @type {any[]} */ messages) => /** @type {any} */ (middleware).transformParams({ type: 'generate', params: { prompt: messages, tools: [TOOL] } });
  await transform(prompt);
  /** @type {number[]} */
  const plain = [];
  /** @type {number[]} */
  const adapted = [];
  /** @type {number[]} */
  const steps = [];
  for (let k = 0; k < 21; k++) {
    prompt.push({ role: 'user', content: [{ type: 'text', text: `one more ${k}` }] });
    let t = performance.now();
    await call(prompt);
    plain.push(performance.now() - t);
    t = performance.now();
    const bounded = await transform(prompt);
    steps.push(performance.now() - t);
    await call(bounded.prompt);
    adapted.push(performance.now() - t);
  }
  const [p, a] = [median(plain), median(adapted)];
  console.log(JSON.stringify({ runtime: 'node', adapter: 'ai-sdk', messages: n, call_ms: +p.toFixed(2), with_adapter_ms: +a.toFixed(2), ratio: +(a / p).toFixed(2), adapter_ms: +median(steps).toFixed(2) }));
}
server.close();
