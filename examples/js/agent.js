// The agent world in JavaScript: the memory-update step runs inside the component, and the
// model, the session's files and the clock are functions this host supplies.
import { readFile } from 'node:fs/promises';
import { appendFileSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { instantiate } from './gen-agent/agent.js';
import { WorkmemError, now } from './index.js';

/**
 * Loads the agent component with these capabilities:
 * - `llm(messages)`: the model's answer to `[{role, content}]`, as a string (synchronous: jco
 *   calls imports synchronously);
 * - `store`: `{read(path), write(path, content), append(path, content)}` over the session
 *   directory, for example `directoryStore(dir)`;
 * - `clock()`: the time as RFC 3339 (default: now).
 */
export async function loadAgent({ llm, store, clock = now }) {
  const dir = new URL('./gen-agent/', import.meta.url);
  const core = async (name) => WebAssembly.compile(await readFile(new URL(name, dir)));
  const root = await instantiate(core, {
    // A plain string is an answer without usage.
    'workmem:memory/llm': { complete: (messages) => {
      const answer = llm(messages);
      return typeof answer === 'string' ? { text: answer } : answer;
    } },
    'workmem:memory/store': store,
    'workmem:memory/clock': { now: clock },
  });
  return {
    /** Spec 000's memory-update step for `task`; throws WorkmemError when nothing was applied. */
    memoryUpdate(task, maxReprompts = 2) {
      try {
        return root.memoryUpdate(task, maxReprompts);
      } catch (e) {
        if (typeof e?.payload === 'string') throw new WorkmemError(e.payload);
        throw e;
      }
    },
  };
}

/** A store over `root`: paths stay relative and inside it, and symlinks are not followed. */
export function directoryStore(root) {
  const refused = (why) => Object.assign(new Error(why), { payload: { tag: 'refused', val: why } });
  const resolve = (path) => {
    const parts = path.split('/').filter((p) => p !== '' && p !== '.');
    if (!path || path.startsWith('/') || path.includes('\\') || path.includes('\0') || parts.includes('..')) {
      throw refused(`${JSON.stringify(path)} is refused: paths must be relative to the session directory, without ..`);
    }
    let full = root;
    for (const part of parts) {
      full = join(full, part);
      try {
        if (lstatSync(full).isSymbolicLink()) throw refused(`${JSON.stringify(path)} goes through a symlink`);
      } catch (e) {
        if (e.code !== 'ENOENT') throw e;
      }
    }
    return full;
  };
  // jco turns a thrown value's `payload` into the import's `err`.
  const attempt = (f) => {
    try {
      return f();
    } catch (e) {
      if (e.payload) throw e.payload;
      if (e.code === 'ENOENT') throw { tag: 'not-found' };
      throw { tag: 'other', val: String(e.message ?? e) };
    }
  };
  return {
    read: (path) => attempt(() => readFileSync(resolve(path), 'utf8')),
    write: (path, content) => attempt(() => {
      const full = resolve(path);
      mkdirSync(dirname(full), { recursive: true });
      const tmp = `${full}.tmp-${process.pid}`;
      writeFileSync(tmp, content);
      renameSync(tmp, full);
    }),
    append: (path, content) => attempt(() => appendFileSync(resolve(path), content)),
  };
}
