// The wrapper's promises: plain objects in and out, refusals as WorkmemError with diagnostics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, emptyState, merge, now, parse, updatePrompt, WorkmemError } from '../index.js';

test('apply throws a WorkmemError that carries positioned diagnostics', () => {
  const state = emptyState();
  assert.throws(() => apply(state, 'KEY_LEARNINGS:\n  ADD:\n    - no reason\n'), (e) => {
    assert.ok(e instanceof WorkmemError);
    assert.deepEqual(e.diagnostics.map((d) => [d.severity, d.line, d.column]), [['error', 3, 7]]);
    assert.match(e.message, /first at 3:7/);
    return true;
  });
});

test('merge turns the component err into a WorkmemError', () => {
  const update = { progress: emptyState().progress, learnings: { add: [{ reason: ' ', text: 'x' }], archive: [] }, verbatim: { add: [], archive: [] } };
  assert.throws(() => merge(emptyState(), [update]), (e) => e instanceof WorkmemError && /non-empty reason/.test(e.message));
});

test('state is a plain object that round-trips through JSON', () => {
  let state = emptyState();
  state = apply(state, 'KEY_LEARNINGS:\n  ADD:\n    - because a: b\n').state;
  const restored = JSON.parse(JSON.stringify(state));
  const next = apply(restored, 'KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because done\n', now());
  assert.deepEqual(next.archived, ['KL-1']);
  assert.match(updatePrompt(next.state, 'next task'), /next task/);
  assert.equal(parse('nothing here').ok, false);
});
