// For examples/bench_runtimes.py: cold load + first call, then the median latency of applying
// the 4 KB update to a memory kept in the engine, through jco in Node. Prints one JSON line.
import { readFileSync } from 'node:fs';

const t0 = performance.now();
const wm = await import('./index.js'); // compiles and instantiates the component
new wm.Memory().render();
const cold = performance.now() - t0;

const data = new URL('../../host/bench/benches/data/', import.meta.url);
const setup = readFileSync(new URL('setup.dsl', data), 'utf8');
const update = readFileSync(new URL('update-4k.dsl', data), 'utf8');
const noop = 'KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-999 because it does not exist\n';
const at = '2026-11-22T12:00:00Z';
const start = new wm.Memory();
start.apply(setup, { at });
const state = start.save();

/**
 * Median of `samples` timings of `f`, each on a fresh memory at the setup state (not timed).
 * @param {number} samples
 * @param {(m: import('./index.js').Memory) => void} f
 */
function medianEach(samples, f) {
  const times = [];
  for (let s = 0; s < samples; s++) {
    const memory = wm.Memory.load(state);
    const t = performance.now();
    f(memory);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[samples >> 1];
}

/**
 * @param {number} samples
 * @param {number} batch
 * @param {() => void} f
 */
function median(samples, batch, f) {
  const times = [];
  for (let s = 0; s < samples; s++) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) f();
    times.push((performance.now() - t) / batch);
  }
  times.sort((a, b) => a - b);
  return times[samples >> 1];
}

// V8 runs wasm first as its baseline compiler's (Liftoff) code and recompiles hot functions
// with TurboFan as they run: the first applies measure the one, applies after a long warm-up
// the other, which is what a long-lived agent host runs.
const early = medianEach(51, (m) => m.apply(update, { at }));
medianEach(1000, (m) => m.apply(update, { at })); // warm up
const apply = medianEach(201, (m) => m.apply(update, { at }));
const noopApply = medianEach(201, (m) => m.apply(noop, { at }));
const call = median(201, 200, () => wm.overviewTemplate());
console.log(JSON.stringify({ runtime: 'Node (jco)', apply_us: apply * 1e3, early_us: early * 1e3, noop_us: noopApply * 1e3, call_us: call * 1e3, cold_ms: cold }));
