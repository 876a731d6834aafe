//! The state as `working-memory/overview.md`, and the template a new session starts with.

use crate::{MemoryState, Progress};
use std::fmt::Write;

/// Spec 001 US-5: the guiding template of a new session's overview.md.
pub const TEMPLATE: &str = "\
# Working Memory

<!--
This is your external memory. On every request the content of this file is loaded into your prompt.
You decide what to remember and what to drop.

Your context is limited. You decide:
- when to compact
- what information to remember
- what history to drop

Update this file with the write tool: working-memory/overview.md
On the next request you will see what you wrote.

This is YOUR memory. You control what you see.
-->

## Current task
<!-- What did the user ask you to do? Current progress? -->

## Key decisions
<!-- What important decisions did you make? Why? -->

## Known facts
<!-- Project structure, tech stack, key files, etc. -->

## Open issues
<!-- Problems or blockers to resolve -->

## Recent actions
<!-- What you did in the last few steps (optional, for quick review) -->

<!--
Tips:
- look at context_meta (injected automatically every time) for token usage
- to keep detailed content, write into the working-memory/detail/ directory
- file paths are relative to the session directory
-->
";

pub fn overview(state: &MemoryState) -> String {
    let mut s = String::from("# Working Memory\n\n<!-- Maintained by workmem from DSL updates. -->\n\n## Current Progress\n\n");
    if state.progress.in_progress.is_empty() {
        s.push_str("_Nothing recorded yet._\n\n");
    } else {
        progress(&mut s, &state.progress);
    }

    s.push_str("## Key Learnings\n\n");
    let mut any = false;
    for l in state.learnings.iter().filter(|l| l.archived_at.is_empty()) {
        let _ = writeln!(s, "- **{}**: {}", l.id, l.text);
        any = true;
    }
    s.push_str(if any { "\n" } else { "_None yet._\n\n" });

    s.push_str("## Verbatim Context\n\n");
    let mut any = false;
    for v in state.verbatim.iter().filter(|v| v.archived_at.is_empty()) {
        let fence = fence_for(&v.snippet);
        let _ = writeln!(s, "### {}: {}\n\n{fence}\n{}\n{fence}\n", v.id, v.label, v.snippet);
        any = true;
    }
    if !any {
        s.push_str("_None yet._\n\n");
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

fn progress(s: &mut String, p: &Progress) {
    for (name, items) in [("Completed", &p.completed), ("In Progress", &p.in_progress), ("Remaining", &p.remaining)] {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {name}\n");
        for item in items {
            let _ = writeln!(s, "- {item}");
        }
        s.push('\n');
    }
}

/// A backtick fence longer than any backtick run in `text`, so the snippet cannot end it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}
