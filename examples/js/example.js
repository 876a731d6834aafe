// An agent's memory-update step with workmem: build the prompt, ask the model, apply its
// answer, and re-prompt with the diagnostics when the answer is malformed. The "model" here
// replays the sample responses in examples/responses/, one per call.
import { readFileSync, readdirSync } from 'node:fs';
import { apply, emptyState, render, updatePrompt, WorkmemError } from './index.js';

const dir = new URL('../responses/', import.meta.url);
const answers = readdirSync(dir).filter((f) => f.endsWith('.dsl')).sort();
let turn = 0;
const model = (prompt) => {
  const name = answers[turn++ % answers.length];
  console.log(`model <- ${prompt.length} characters of prompt; model -> ${name}`);
  return readFileSync(new URL(name, dir), 'utf8');
};

let state = emptyState();
for (const task of ['Fix Quantity.to() for composite units', 'Keep going: fix it and test it']) {
  let prompt = updatePrompt(state, task);
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const result = apply(state, model(prompt));
      state = result.state;
      console.log(result.diff);
      break;
    } catch (e) {
      if (!(e instanceof WorkmemError)) throw e;
      const errors = e.diagnostics.map((d) => `line ${d.line}, column ${d.column}: ${d.message}`).join('\n');
      console.log(`rejected, asking again:\n${errors}\n`);
      prompt = `${updatePrompt(state, task)}\n\nYour previous answer had these errors; answer again:\n${errors}\n`;
    }
  }
}
console.log(render(state));
