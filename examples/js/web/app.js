import { apply, emptyState, render, WorkmemError } from '../index.js';

const $ = (id) => document.getElementById(id);
let state = emptyState();

const sample = `CURRENT_PROGRESS:
  In Progress:
    - Trying workmem in the browser
KEY_LEARNINGS:
  ADD:
    - because it runs anywhere: the engine is one WebAssembly component
`;

function show(diagnostics) {
  $('diagnostics').replaceChildren(...diagnostics.map((d) => {
    const li = document.createElement('li');
    li.className = d.severity;
    li.textContent = `${d.line}:${d.column} ${d.severity}: ${d.message}`;
    return li;
  }));
  $('overview').textContent = render(state);
}

$('apply').addEventListener('click', () => {
  try {
    const result = apply(state, $('dsl').value);
    state = result.state;
    show(result.warnings);
  } catch (e) {
    if (!(e instanceof WorkmemError)) throw e;
    show(e.diagnostics);
  }
});
$('reset').addEventListener('click', () => {
  state = emptyState();
  show([]);
});

$('dsl').value = sample;
show([]);
document.body.dataset.ready = 'true';
