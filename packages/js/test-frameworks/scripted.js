// The scripted 40-step loop every framework adapter is held to: the scripted model on loopback
// (tests/proxy/upstream.py, served by packages/python/tests/bounded_run.py, which also runs the
// same checks of a finished run as the Python adapters' tests do). `WORKMEM_PYTHON` is the
// project's Python environment, `WORKMEM_BIN` the CLI (`make test-frameworks` sets both).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const STEPS = 40;
export const WINDOW = 8000;
export const TASK = 'Read file_1.txt to file_12.txt, again and again, and say when you are done.';
export const SYSTEM = "You read the project's files one by one.";
const ROOT = new URL('../../../', import.meta.url).pathname;

/** Starts the scripted model: `{ baseURL, file(path), check(sessionDir), reset(), close() }`. */
export async function scripted() {
  const python = process.env.WORKMEM_PYTHON;
  if (!python || !process.env.WORKMEM_BIN) throw new Error('WORKMEM_PYTHON and WORKMEM_BIN name the project Python and the CLI (make test-frameworks sets them)');
  const dir = mkdtempSync(join(tmpdir(), 'workmem-frameworks-'));
  const child = spawn(python, [join(ROOT, 'packages/python/tests/bounded_run.py'), 'serve', join(dir, 'upstream.jsonl')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, PYTHONPATH: join(ROOT, 'packages/python') },
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('the scripted model ended');
    return value;
  };
  const { port, files } = JSON.parse(await next());
  const ask = async (/** @type {string} */ line) => {
    child.stdin.write(`${line}\n`);
    const answer = await next();
    if (answer !== 'ok') throw new Error(`the run's checks failed:\n${JSON.parse(answer)}`);
  };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    dir,
    /** The file tool's answer for `file_<k>.txt`. */
    file: (/** @type {string} */ path) => files[Number(/file_(\d+)/.exec(path)?.[1])] ?? `no such file: ${path}`,
    check: (/** @type {string} */ sessionDir) => ask(`check ${sessionDir} ${mkdtempSync(join(dir, 'check-'))}`),
    reset: () => ask('reset'),
    close: () => {
      child.stdin.end();
      return new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
