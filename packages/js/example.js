// An agent's memory-update step with workmem, driven from JavaScript with an async model
// client: the engine says what to ask, this file asks, the engine applies the answer or asks
// again with the diagnostics. With OPENAI_BASE_URL set it asks that endpoint through fetch;
// otherwise a script replays examples/responses/ (a malformed answer, then a good one).
import { readFileSync } from 'node:fs';
import { chatCompletions, Memory } from './index.js';

/** @type {import('./index.js').Ask} */
let ask;
if (process.env.OPENAI_BASE_URL) {
  ask = chatCompletions({ baseUrl: process.env.OPENAI_BASE_URL, model: process.env.WORKMEM_MODEL ?? 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY });
} else {
  const responses = new URL('../../examples/responses/', import.meta.url);
  const answers = ['02-malformed.dsl', '01-start.dsl', '03-progress.dsl'].map((f) => readFileSync(new URL(f, responses), 'utf8'));
  ask = async (messages) => {
    console.log(`model <- ${messages.length} messages`);
    return answers.shift() ?? '';
  };
}

const memory = new Memory();
for (const task of ['Fix Quantity.to() for composite units', 'Keep going: fix it and test it']) {
  const updated = await memory.update(task, ask);
  console.log(`applied after ${updated.attempts} call(s):\n${updated.diff}`);
}
console.log(memory.render());
