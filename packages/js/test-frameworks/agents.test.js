// `workmem/agents` in the real OpenAI Agents SDK for TypeScript (`run` with a
// `callModelInputFilter`), with a Chat Completions model and a Responses model pointed at the
// scripted model: the loop outgrows an 8k window without workmem, and with it runs its 40 steps
// bounded (the checks of ./scripted.js), and a new filter on the same session resumes it.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { WorkmemSession, workmemAgents } from 'workmem/agents';
import { Session } from 'workmem/session';
import { STEPS, SYSTEM, TASK, WINDOW, scripted } from './scripted.js';

setTracingDisabled(true);
/** @type {Awaited<ReturnType<typeof scripted>>} */
let model;
before(async () => {
  model = await scripted();
});
after(() => model.close());

const client = () => new OpenAI({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
const readFile = () => tool({
  name: 'read_file',
  description: 'Read a file of the project.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  strict: true,
  execute: async (input) => model.file(/** @type {{ path: string }} */ (input).path),
});
const agent = (/** @type {import('@openai/agents').Model} */ llm, /** @type {any[]} */ extra = []) => new Agent({ name: 'reader', instructions: SYSTEM, model: llm, tools: [readFile(), ...extra] });

/** @type {[string, (c: OpenAI) => import('@openai/agents').Model][]} */
const models = [['Chat Completions', (c) => new OpenAIChatCompletionsModel(c, 'gpt-4o')], ['Responses', (c) => new OpenAIResponsesModel(c, 'gpt-4o')]];
for (const [protocol, make] of models) {
  test(`${protocol}: without workmem the loop outgrows the window`, async () => {
    await model.reset();
    await assert.rejects(run(agent(make(client())), TASK, { maxTurns: STEPS + 10 }), /context_length_exceeded|maximum context length/);
  });

  test(`${protocol}: with workmem the loop runs bounded, and the session resumes`, async () => {
    await model.reset();
    const session = await Session.create(mkdtempSync(join(tmpdir(), 'workmem-agents-')));
    const memory = workmemAgents({ session, window: WINDOW });
    const result = await run(agent(make(client()), memory.tools), TASK, { callModelInputFilter: memory.callModelInputFilter, maxTurns: STEPS + 10 });
    assert.equal(result.finalOutput, `FINISHED ${STEPS} steps`);
    await model.check(session.dir);

    const again = await Session.open(session.dir);
    const before = (await again.records()).length;
    const next = workmemAgents({ session: again, window: WINDOW });
    await run(agent(make(client()), next.tools), [...result.history, { role: 'user', content: 'And now?' }], { callModelInputFilter: next.callModelInputFilter });
    const added = (await again.records()).slice(before).filter((r) => r.kind === 'message').map((r) => [r.role, r.content]);
    assert.deepEqual(added.slice(0, 2), [['assistant', `FINISHED ${STEPS} steps`], ['user', 'And now?']]);
  });
}

for (const [protocol, make] of models) {
  test(`${protocol}: as the SDK's session, the conversation is kept bounded and undone on request`, async () => {
    await model.reset();
    const session = await Session.create(mkdtempSync(join(tmpdir(), 'workmem-agents-session-')));
    const memory = new WorkmemSession({ session, window: WINDOW });
    const result = await run(agent(make(client()), memory.tools), TASK, { session: memory, callModelInputFilter: memory.callModelInputFilter, maxTurns: STEPS + 10 });
    assert.equal(result.finalOutput, `FINISHED ${STEPS} steps`);
    await model.check(session.dir);
    assert.equal(await memory.getSessionId(), (await session.meta()).id);

    // The next turn, in a new process: the SDK gets the bounded conversation from the session,
    // and only the new message and its answer are new to the log.
    const records = (await session.records()).length;
    const resumed = new WorkmemSession({ session: await Session.open(session.dir), window: WINDOW });
    const history = await resumed.getItems();
    assert.ok(history.length > 0 && history.length < result.history.length, 'the history comes back compacted');
    await run(agent(make(client()), resumed.tools), 'And now?', { session: resumed, callModelInputFilter: resumed.callModelInputFilter });
    const added = (await resumed.session.records()).slice(records).filter((r) => r.kind === 'message').map((r) => [r.role, r.content]);
    assert.deepEqual(added, [['user', 'And now?'], ['assistant', `FINISHED ${STEPS} steps`]]);

    // popItem takes the answer, then the question, out of the conversation; the log keeps both.
    assert.ok(await resumed.popItem());
    const question = /** @type {any} */ (await resumed.popItem());
    assert.equal(question.content, 'And now?');
    assert.deepEqual(await resumed.getItems(), history);
    // clearSession empties the conversation; the memory stays.
    await resumed.clearSession();
    assert.deepEqual(await resumed.getItems(), []);
    assert.match(await resumed.session.overview(), /every file has numbered lines/);
    assert.deepEqual((await resumed.session.view()).entries, []);
  });
}
