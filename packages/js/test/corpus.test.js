// The shared corpora (tests/corpus, tests/scenarios), run through the component in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { Memory, parse, WorkmemError } from '../index.js';

const tests = new URL('../../../tests/', import.meta.url);
/** @param {URL} url */
const read = (url) => readFileSync(url, 'utf8');
/** @param {URL} dir */
const dsl = (dir) => readdirSync(dir).filter((f) => f.endsWith('.dsl')).sort();

/**
 * jco speaks camelCase and `undefined`; the corpus speaks the CLI's snake_case and `null`.
 * @param {unknown} v
 * @returns {unknown}
 */
const wire = (v) =>
  v === undefined || v === null ? null
    : Array.isArray(v) ? v.map(wire)
    : typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), wire(x)]))
    : v;

const corpus = new URL('corpus/', tests);
const cases = dsl(corpus);

test('the corpus has at least 40 cases', () => assert.ok(cases.length >= 40, `${cases.length} cases`));

for (const name of cases) {
  test(`parse ${name}`, () => {
    const expected = JSON.parse(read(new URL(name.replace(/\.dsl$/, '.json'), corpus)));
    assert.deepStrictEqual(wire(parse(read(new URL(name, corpus)))), expected);
  });
}

const scenarios = new URL('scenarios/', tests);
for (const dir of readdirSync(scenarios).filter((d) => statSync(new URL(d, scenarios)).isDirectory())) {
  test(`scenario ${dir}`, () => {
    const base = new URL(`${dir}/`, scenarios);
    const memory = new Memory();
    dsl(base).forEach((name, i) => {
      const stem = name.replace(/\.dsl$/, '');
      const at = `2026-01-01T00:00:${String(i + 1).padStart(2, '0')}Z`;
      let result;
      try {
        const r = memory.apply(read(new URL(name, base)), { at });
        result = { ok: true, added: r.added, archived: r.archived, ignored: r.ignored, diff: r.diff, diagnostics: r.warnings };
      } catch (e) {
        if (!(e instanceof WorkmemError)) throw e;
        result = { ok: false, added: [], archived: [], ignored: [], diff: null, diagnostics: e.diagnostics };
      }
      assert.deepStrictEqual(wire(result), JSON.parse(read(new URL(`${stem}.expected.json`, base))), stem);
      assert.equal(memory.render(), read(new URL(`${stem}.overview.md`, base)), stem);
    });
    // The serialized memory is the same bytes the Rust host wrote, and loads back.
    const saved = read(new URL('final.state.json', base));
    assert.equal(memory.save(), saved);
    assert.equal(Memory.load(saved).save(), saved);
  });
}
