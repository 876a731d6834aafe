// Spec 004's document through jco: tests/data/document/ says what every runtime must say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { contextDocument, DocumentError } from '../index.js';

const dir = new URL('../../../tests/data/document/', import.meta.url);
const cases = JSON.parse(readFileSync(new URL('cases.json', dir), 'utf8'));
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));

test('the document conformance case', () => {
  cases.validate.forEach((/** @type {{text?: string, hex?: string}} */ c, /** @type {number} */ n) => {
    const input = c.text ?? Uint8Array.from(Buffer.from(c.hex ?? '', 'hex'));
    const want = expected.validate[n];
    if (want === null) {
      contextDocument.validate(input, cases.limit);
    } else {
      assert.throws(() => contextDocument.validate(input, cases.limit), (e) => e instanceof DocumentError && e.rule === want[0] && e.message === want[1], `case ${n}`);
    }
  });
  cases.documents.forEach((/** @type {string} */ d, /** @type {number} */ n) => {
    assert.deepEqual(contextDocument.sections(d).map((s) => [s.name, s.line]), expected.sections[n]);
  });
  cases.replace.forEach((/** @type {{document: number, name: string, body: string}} */ r, /** @type {number} */ n) => {
    assert.equal(contextDocument.replaceSection(cases.documents[r.document], r.name, r.body), expected.replace[n]);
  });
  assert.equal(contextDocument.section(cases.documents[0], 'facts'), '- CEO = Bob\n');
  assert.equal(contextDocument.section(cases.documents[0], 'Timeline'), undefined);
  assert.throws(() => contextDocument.validate('bell \u0007', 64), (/** @type {DocumentError} */ e) => e.rule === 'control-character' && e.line === 1 && e.column === 6);
});
