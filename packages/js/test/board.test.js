// The board through jco: tests/data/board/ (spec 002's example as data) gives the same
// events, state, views and refusals as every other runtime; refusals are BoardErrors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Board, BoardError } from '../index.js';

const dir = new URL('../../../tests/data/board/', import.meta.url);
/** @param {string} name */
const read = (name) => readFileSync(new URL(name, dir), 'utf8');

test('the board conformance case', () => {
  const created = JSON.parse(read('board.json'));
  const board = Board.create({ ...created, memoryCoreRefs: created.memory_core_refs, at: created.now });
  let events = '';
  read('ops.jsonl').trim().split('\n').forEach((line, n) => {
    const step = JSON.parse(line);
    const before = board.save();
    if (step.refused === undefined) {
      events += board.apply(step.actor, step.op, { at: step.at }).event + '\n';
    } else {
      assert.throws(() => board.apply(step.actor, step.op, { at: step.at }), (e) => e instanceof BoardError && e.message === step.refused && e.rule === step.rule, `ops.jsonl line ${n + 1}`);
      assert.equal(board.save(), before, 'a refused op changed the board');
    }
  });
  assert.equal(events, read('events.jsonl'));
  assert.equal(board.save(), read('state.json'));
  for (const [key, expected] of Object.entries(JSON.parse(read('views.json')))) {
    const [name, arg] = key.split(':');
    const got = name === 'brief' ? board.brief(arg) : board.view(/** @type {import('../index.js').BoardView} */ (name), arg);
    assert.deepEqual(got, expected, key);
  }

  const fresh = Board.create({ ...created, memoryCoreRefs: created.memory_core_refs, at: created.now });
  const lines = events.trim().split('\n');
  assert.throws(() => fresh.replay(lines[1]), /next event is revision 1/);
  for (const line of lines) fresh.replay(line);
  assert.equal(fresh.save(), board.save());
  assert.equal(Board.load(board.save()).revision, board.revision);
});

test('a refusal names its rule', () => {
  const board = Board.create({ id: 'b', name: 'n', goal: 'g' });
  board.apply('orchestrator', { op: 'add_task', title: 'a', description: '', depends_on: [], needs_review: false });
  assert.throws(() => board.apply('orchestrator', { op: 'add_dependency', task: 'T-1', on: 'T-1' }), (/** @type {BoardError} */ e) => {
    assert.equal(e.rule, 'cycle');
    assert.deepEqual(e.detail, ['T-1', 'T-1']);
    assert.equal(e.message, 'that dependency would close a cycle: T-1 -> T-1');
    return true;
  });
  assert.throws(() => Board.create({ id: 'b', name: 'n', goal: ' ' }), (e) => e instanceof BoardError && e.rule === 'empty');
});

test('the one rule of IDs (tests/data/ids.json)', () => {
  const ids = JSON.parse(readFileSync(new URL('../ids.json', dir), 'utf8'));
  for (const id of ids.refused) {
    assert.throws(() => Board.create({ id, name: 'n', goal: 'g' }), (e) => e instanceof BoardError && e.rule === 'invalid-id', JSON.stringify(id));
  }
  for (const id of ids.accepted) Board.create({ id, name: 'n', goal: 'g' });
});
