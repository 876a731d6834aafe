// The memory-update step inside the component, with this file supplying the model (a script
// here: the first answer is malformed, the second right), the files and the clock.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryStore, loadAgent } from './agent.js';

const responses = new URL('../responses/', import.meta.url);
const answers = ['02-malformed.dsl', '01-start.dsl'].map((f) => readFileSync(new URL(f, responses), 'utf8'));
const session = mkdtempSync(join(tmpdir(), 'workmem-session-'));

const agent = await loadAgent({
  llm: (messages) => {
    console.log(`model <- ${messages.length} messages`);
    return answers.shift();
  },
  store: directoryStore(session),
});
const report = agent.memoryUpdate('Fix Quantity.to() for composite units');
console.log(`applied after ${report.attempts} calls:\n${report.diff}`);
console.log(readFileSync(join(session, 'working-memory/overview.md'), 'utf8'));
