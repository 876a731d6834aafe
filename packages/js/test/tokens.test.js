// The adapters count every message as the Rust host does: tests/data/tokens.json holds the
// host's counts (a Rust test keeps them its own; the Python adapters are held to them too).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Bound } from '../bound.js';

test('every message of the shared token corpus counts what the Rust host counts', async () => {
  const data = JSON.parse(readFileSync(new URL('../../../tests/data/tokens.json', import.meta.url), 'utf8'));
  const bound = new Bound(/** @type {any} */ (null));
  /** @type {Record<string, number>} */
  const counted = {};
  /** @type {Record<string, number>} */
  const expected = {};
  for (const c of data.cases) {
    const toolCalls = c.tool_calls.map((/** @type {[string, string]} */ [name, args], /** @type {number} */ i) => ({ id: `c${i}`, name, arguments: args }));
    counted[c.name] = await bound.tokens({ role: c.role, content: c.content, toolCalls });
    expected[c.name] = c.tokens;
  }
  assert.deepEqual(counted, expected);
});
