//! Spec 000 §5.1: the one prompt that asks the model to update every section at once.

use crate::MemoryState;
use std::fmt::Write;

const INSTRUCTIONS: &str = "\
## Instructions

- CURRENT_PROGRESS: rewrite the whole section every time. `In Progress:` is mandatory with at \
least one bullet; add `Completed:` and `Remaining:` when they help. Keep bullets concise (under \
100 characters) and action-oriented.
- KEY_LEARNINGS: add at most 1-3 high-value insights per update, and none if unsure. Each \
insight is a single line with no filler. Archive an entry that is wrong or no longer useful by \
its ID.
- VERBATIM_CONTEXT: add a snippet only when upcoming steps need its exact text. Give it a short \
label saying what it is (file path, config key, command). A snippet may span several lines \
after `=>`; keep its indentation. Archive snippets that are outdated by their ID.
- Every ADD and ARCHIVE bullet carries `because <reason>`, one sentence. In an ADD the reason \
ends at the first `:`.
- Write `(none)` under an empty `ADD:` or `ARCHIVE:`, or leave that list out; keep all three \
section headers.
- Only archive IDs listed above. New entries get their IDs from the system: never invent one.
- Answer with the DSL block only, indented with two spaces per level as in the example.
";

const EXAMPLE: &str = "\
## Format (a complete example)

CURRENT_PROGRESS:
  Completed:
    - Reproduced the failure with tests/test_quantity.py::test_to_composite
  In Progress:
    - Fixing the scale factor lost in Quantity.to() for composite units
  Remaining:
    - Run the units test suite
    - Summarize the fix for the user
KEY_LEARNINGS:
  ADD:
    - because it explains the failure: Quantity.to() drops the scale of composite units
  ARCHIVE:
    - KL-1 because the caching hypothesis was disproved
VERBATIM_CONTEXT:
  ADD:
    - because the fix must keep this signature: astropy/units/quantity.py => def to(self, unit, equivalencies=[], copy=True):
        unit = Unit(unit)
        return self._new_view(self._to_value(unit, equivalencies), unit)
  ARCHIVE:
    - VC-2 because the config file was replaced
";

pub fn update_prompt(state: &MemoryState, task: &str) -> String {
    let mut s = String::from(
        "You maintain the working memory of an agent: Current Progress, Key Learnings (KL-#) and \
         Verbatim Context (VC-#). Update it for the latest task by answering with one DSL block \
         in the format shown at the end.\n\n",
    );
    let _ = writeln!(s, "## Latest task\n\n{}\n", task.trim());

    s.push_str("## Current Progress (previous)\n\n");
    let p = &state.progress;
    if p.in_progress.is_empty() {
        s.push_str("(none yet)\n\n");
    } else {
        for (name, items) in [("Completed", &p.completed), ("In Progress", &p.in_progress), ("Remaining", &p.remaining)] {
            if !items.is_empty() {
                let _ = writeln!(s, "{name}:");
                for item in items {
                    let _ = writeln!(s, "  - {item}");
                }
            }
        }
        s.push('\n');
    }

    s.push_str("## Key Learnings (active)\n\n");
    let mut any = false;
    for l in state.learnings.iter().filter(|l| l.archived_at.is_empty()) {
        let _ = writeln!(s, "- {}: {}", l.id, l.text);
        any = true;
    }
    s.push_str(if any { "\n" } else { "(none yet)\n\n" });

    s.push_str("## Verbatim Context (active)\n\n");
    let mut any = false;
    for v in state.verbatim.iter().filter(|v| v.archived_at.is_empty()) {
        let _ = writeln!(s, "- {}: {} =>", v.id, v.label);
        for line in v.snippet.lines() {
            let _ = writeln!(s, "    {line}");
        }
        any = true;
    }
    s.push_str(if any { "\n" } else { "(none yet)\n\n" });

    s.push_str(INSTRUCTIONS);
    s.push('\n');
    s.push_str(EXAMPLE);
    s
}
