// `workmem/ai-sdk` in the real AI SDK (`generateText`, `streamText`, `wrapLanguageModel`), over
// an OpenAI-compatible provider pointed at the scripted model: the loop outgrows an 8k window
// without workmem, and with it runs its 40 steps bounded, its outputs seen whole before any
// compaction, calls and results paired, a read back of original bytes, a memory update kept,
// and a session the CLI shows and a new middleware resumes.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { workmemMiddleware } from 'workmem/ai-sdk';
import { Session } from 'workmem/session';
import { STEPS, SYSTEM, TASK, WINDOW, scripted } from './scripted.js';

/** @type {Awaited<ReturnType<typeof scripted>>} */
let model;
before(async () => {
  model = await scripted();
});
after(() => model.close());

/** An OpenAI-compatible provider's Chat Completions model, or the OpenAI provider's Responses model. */
const provider = (api = 'chat') => (api === 'chat'
  ? createOpenAICompatible({ name: 'loopback', baseURL: model.baseURL, apiKey: 'test' }).chatModel('gpt-4o')
  : createOpenAI({ baseURL: model.baseURL, apiKey: 'test' }).responses('gpt-4o'));
const tools = () => ({
  read_file: tool({
    description: 'Read a file of the project.',
    inputSchema: /** @type {import('ai').Schema<{ path: string }>} */ (jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] })),
    execute: async (/** @type {{ path: string }} */ { path }) => model.file(path),
  }),
});
const run = (/** @type {import('ai').LanguageModel} */ llm) => ({ model: llm, system: SYSTEM, prompt: TASK, tools: tools(), stopWhen: stepCountIs(STEPS + 10), maxRetries: 0 });
const root = () => mkdtempSync(join(tmpdir(), 'workmem-ai-sdk-'));

test('without workmem the loop outgrows the window', async () => {
  await model.reset();
  await assert.rejects(generateText(run(provider())), /context_length_exceeded|maximum context length/);
});

test('generateText with the middleware runs the loop bounded, and the session resumes', async () => {
  await model.reset();
  const session = await Session.create(root());
  const llm = wrapLanguageModel({ model: provider(), middleware: workmemMiddleware({ session, window: WINDOW }) });
  const result = await generateText(run(llm));
  assert.equal(result.text, `FINISHED ${STEPS} steps`);
  // The application never saw workmem's own calls.
  const called = result.steps.flatMap((s) => s.toolCalls.map((c) => c.toolName));
  assert.ok(called.length >= (STEPS * 3) / 4 && called.every((n) => n === 'read_file'), called.join(','));
  await model.check(session.dir);

  // A new process's middleware on the same session logs only what is new.
  const again = await Session.open(session.dir);
  const before = (await again.records()).length;
  const next = wrapLanguageModel({ model: provider(), middleware: workmemMiddleware({ session: again, window: WINDOW }) });
  /** @type {import('ai').ModelMessage[]} */
  const messages = [{ role: 'user', content: TASK }, ...result.response.messages, { role: 'user', content: 'And now?' }];
  await generateText({ model: next, system: SYSTEM, messages, tools: tools(), maxRetries: 0 });
  const added = (await again.records()).slice(before).filter((r) => r.kind === 'message').map((r) => [r.role, r.content]);
  assert.deepEqual(added.slice(0, 2), [['assistant', `FINISHED ${STEPS} steps`], ['user', 'And now?']]);
});

test('streamText with the middleware runs the loop bounded', async () => {
  await model.reset();
  const session = await Session.create(root());
  const llm = wrapLanguageModel({ model: provider(), middleware: workmemMiddleware({ session, window: WINDOW }) });
  const result = streamText(run(llm));
  let text = '';
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'tool-call') assert.equal(part.toolName, 'read_file');
    if (part.type === 'error') throw part.error;
  }
  assert.ok(text.endsWith(`FINISHED ${STEPS} steps`), text.slice(-200));
  await model.check(session.dir);
});

test('bad input: a corrupted log line is an error naming its line, a foreign directory is no session, a clashing tool is refused', async () => {
  const session = await Session.create(root());
  const llm = wrapLanguageModel({ model: provider(), middleware: workmemMiddleware({ session, window: WINDOW }) });
  await generateText({ model: llm, system: SYSTEM, prompt: 'Say hi.', maxRetries: 0 }).catch(() => {});
  const records = (await session.records()).length;
  appendFileSync(join(session.dir, 'messages.jsonl'), '{"seq": 99, "kind":\n');
  const fresh = await Session.open(session.dir);
  const middleware = workmemMiddleware({ session: fresh, window: WINDOW });
  await assert.rejects(generateText({ model: wrapLanguageModel({ model: provider(), middleware }), prompt: 'Again.', maxRetries: 0 }),
    (e) => /messages\.jsonl:\d+:\d+/.test(String(e)));
  assert.ok(records > 0);
  await assert.rejects(Session.open(mkdtempSync(join(tmpdir(), 'foreign-'))), /is not a session/);
  // An application tool of one of workmem's names would never be called: refused, nothing sent.
  const clashing = { read_history: tool({ description: 'Mine.', inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'mine' }) };
  const other = await Session.create(root());
  await assert.rejects(generateText({ model: wrapLanguageModel({ model: provider(), middleware: workmemMiddleware({ session: other }) }), prompt: 'Hi.', tools: clashing, maxRetries: 0 }),
    /a tool named read_history, one of workmem's own/);
  assert.deepEqual(await other.records(), []);
});

for (const streamed of [false, true]) {
  test(`${streamed ? 'streamText' : 'generateText'} on the Responses API with the middleware runs the loop bounded, reasoning returned`, async () => {
    await model.reset();
    const session = await Session.create(root());
    const llm = wrapLanguageModel({ model: provider('responses'), middleware: workmemMiddleware({ session, window: WINDOW }) });
    // Not stored by the provider: each turn's reasoning goes back whole, not as a reference to it.
    const options = { ...run(llm), providerOptions: { openai: { store: false } } };
    let text = '';
    if (streamed) {
      for await (const part of streamText(options).fullStream) {
        if (part.type === 'text-delta') text += part.text;
        if (part.type === 'error') throw part.error;
      }
    } else {
      text = (await generateText(options)).text;
    }
    assert.ok(text.endsWith(`FINISHED ${STEPS} steps`), text.slice(-200));
    await model.check(session.dir);
  });
}

test('a call of workmem\'s tool whose arguments are not JSON is answered with the error, and the memory is unchanged', async () => {
  // A loopback model that calls update_memory with arguments that do not parse, then answers.
  /** @type {unknown[]} */
  const bodies = [];
  const server = createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString()));
      const message = bodies.length === 1
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'update_memory', arguments: 'CURRENT_PROGRESS: {' } }] }
        : { role: 'assistant', content: 'done' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'r', object: 'chat.completion', created: 0, model: 'gpt-4o', choices: [{ index: 0, finish_reason: bodies.length === 1 ? 'tool_calls' : 'stop', message }] }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  try {
    const address = /** @type {import('node:net').AddressInfo} */ (server.address());
    const llm = createOpenAICompatible({ name: 'loopback', baseURL: `http://127.0.0.1:${address.port}/v1`, apiKey: 'test' }).chatModel('gpt-4o');
    const session = await Session.create(root());
    const before = await session.overview();
    const result = await generateText({ model: wrapLanguageModel({ model: llm, middleware: workmemMiddleware({ session }) }), prompt: 'Remember this.', maxRetries: 0 });
    assert.equal(result.text, 'done');
    assert.equal(bodies.length, 2);
    const answers = (await session.records()).filter((r) => r.role === 'tool').map((r) => r.content);
    assert.deepEqual(answers, ['error: the arguments are not JSON']);
    assert.equal(await session.overview(), before);
  } finally {
    server.close();
  }
});
