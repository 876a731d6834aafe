// For examples/bench_runtimes.py: cold load + first call, then the median apply latency of
// the 4 KB update, through jco in Node. Prints one JSON line.
import { readFileSync } from 'node:fs';

const t0 = performance.now();
const wm = await import('./index.js'); // compiles and instantiates the component
const empty = wm.emptyState();
const cold = performance.now() - t0;

const data = new URL('../../host/benches/data/', import.meta.url);
const setup = readFileSync(new URL('setup.dsl', data), 'utf8');
const update = readFileSync(new URL('update-4k.dsl', data), 'utf8');
const now = '2026-11-22T12:00:00Z';
const state = wm.apply(empty, setup, now).state;

function median(samples, batch, f) {
  for (let i = 0; i < batch * 3; i++) f();
  const times = [];
  for (let s = 0; s < samples; s++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) f();
    times.push((performance.now() - start) / batch);
  }
  times.sort((a, b) => a - b);
  return times[samples >> 1];
}

const apply = median(201, 20, () => wm.apply(state, update, now));
const roundtrip = median(201, 20, () => wm.merge(state, [], now));
const call = median(201, 200, () => wm.emptyState());
console.log(JSON.stringify({ runtime: 'Node (jco)', apply_us: apply * 1e3, roundtrip_us: roundtrip * 1e3, call_us: call * 1e3, cold_ms: cold }));
