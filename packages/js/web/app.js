import { Memory, WorkmemError } from '../index.js';

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
let memory = new Memory();

const sample = `CURRENT_PROGRESS:
  In Progress:
    - Trying workmem in the browser
KEY_LEARNINGS:
  ADD:
    - because it runs anywhere: the engine is one WebAssembly component
`;

/** @param {import('../index.js').Diagnostic[]} diagnostics */
function show(diagnostics) {
  $('diagnostics').replaceChildren(...diagnostics.map((d) => {
    const li = document.createElement('li');
    li.className = d.severity;
    li.textContent = `${d.line}:${d.column} ${d.severity}: ${d.message}`;
    return li;
  }));
  $('overview').textContent = memory.render();
}

$('apply').addEventListener('click', () => {
  try {
    show(memory.apply(/** @type {HTMLTextAreaElement} */ ($('dsl')).value).warnings);
  } catch (e) {
    if (!(e instanceof WorkmemError)) throw e;
    show(e.diagnostics);
  }
});
$('reset').addEventListener('click', () => {
  memory = new Memory();
  show([]);
});

/** @type {HTMLTextAreaElement} */ ($('dsl')).value = sample;
show([]);
document.body.dataset.ready = 'true';
