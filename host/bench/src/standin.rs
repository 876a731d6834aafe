//! A stand-in for the model's side of the memory protocol, for the replay: the recorded
//! trajectories never kept a working memory, while workmem's prompt asks for one. After each
//! compaction notice and each reminder that insists, it updates the memory as the prompt
//! asks (an `update_memory` call in the DSL), with content drawn only from what it has seen
//! so far: the task, its own recent steps, the files it touched and the last error a tool
//! showed. It never looks ahead, and it does not know what the needed-facts measure looks for:
//! what it notes it finds by rules of its own, as a diligent model would (issue 48: it drew the
//! files it touched with the measure's own identifier rule, which put in the memory exactly
//! what the measure looks for).

use workmem_store::Message;

/// What the stand-in has seen.
#[derive(Default)]
pub struct StandIn {
    task: String,
    steps: Vec<String>,
    files: Vec<String>,
    error: Option<String>,
    /// What the last update recorded, so that an update adds only what is new.
    recorded_error: Option<String>,
    recorded_files: usize,
    /// Steps seen when it last updated.
    recorded_steps: usize,
}

/// Steps since its last update before a compaction notice makes it update again: the notice
/// asks to bring the memory up to date "if it does not already hold what matters", which it
/// does a step or two after an update.
const STALE_AFTER: usize = 3;

/// Learnings and verbatim entries the stand-in keeps; older ones it archives.
const KEEP: usize = 5;

fn short(text: &str, most: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut out: String = line.chars().filter(|c| !c.is_control()).take(most).collect();
    if out.chars().count() < line.chars().count() {
        out.push('…');
    }
    out
}

/// The files a step names: words with a folder and a short extension (`src/app/main.py`),
/// quotes, brackets and trailing punctuation taken off.
fn paths(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;:=|".contains(c)).map(|w| w.trim_end_matches(['.', '/'])).filter(|w| {
        w.contains('/') && w.rsplit_once('.').is_some_and(|(_, ext)| (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric()))
    })
}

fn is_error(line: &str) -> bool {
    ["Error", "error:", "FAILED", "Traceback", "Exception"].iter().any(|w| line.contains(w))
}

impl StandIn {
    /// A message of the trajectory, as it reaches the model.
    pub fn saw(&mut self, m: &Message) {
        match m.role.as_str() {
            "user" if self.task.is_empty() => self.task = short(&m.content, 160),
            "assistant" => {
                let step = short(&m.content, 120);
                if !step.is_empty() {
                    self.steps.push(step);
                }
                let text: String = std::iter::once(m.content.as_str()).chain(m.tool_calls.iter().map(|c| c.arguments.as_str())).collect::<Vec<_>>().join("\n");
                for w in paths(&text) {
                    if !self.files.iter().any(|f| f == w) {
                        self.files.push(w.to_string());
                    }
                }
            }
            "tool" => {
                if let Some(line) = m.content.lines().rev().find(|l| is_error(l)) {
                    self.error = Some(short(line, 160));
                }
            }
            _ => {}
        }
    }

    /// Whether `context_meta` (the request's last message) asks for an update now: a reminder
    /// that insists, or a compaction notice when the memory is not fresh.
    pub fn asked(&self, context_meta: &str) -> bool {
        let insists = context_meta.contains("You have not updated") || context_meta.contains("Archive finished work");
        let stale = self.steps.len() >= self.recorded_steps + STALE_AFTER;
        insists || (context_meta.contains("History was compacted") && stale)
    }

    /// The update, in the DSL; `memory` is the working memory the request carried (the
    /// stand-in archives its oldest entries past [`KEEP`]).
    pub fn update(&mut self, memory: &str) -> String {
        self.recorded_steps = self.steps.len();
        let clean = |s: &str| s.replace(['`', '\n'], " ");
        let mut dsl = String::from("CURRENT_PROGRESS:\n  Completed:\n");
        let done = self.steps.len().saturating_sub(1);
        for step in &self.steps[done.saturating_sub(3)..done] {
            dsl.push_str(&format!("    - {}\n", clean(step)));
        }
        if done == 0 {
            dsl.push_str("    - None\n");
        }
        dsl.push_str(&format!("  In Progress:\n    - {}\n", clean(self.steps.last().map_or("Reading the task", String::as_str))));
        dsl.push_str(&format!("  Remaining:\n    - Finish the task: {}\n", clean(&self.task)));
        let archive = |prefix: &str| -> Vec<String> {
            let words = memory.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
            let mut ids: Vec<u32> = words.filter_map(|w| w.strip_prefix(prefix)?.parse().ok()).collect();
            ids.sort_unstable();
            ids.dedup();
            ids.iter().take(ids.len().saturating_sub(KEEP - 1)).map(|n| format!("    - {prefix}{n} because it is superseded by newer entries\n")).collect()
        };
        let error = self.error.clone().filter(|e| self.recorded_error.as_ref() != Some(e));
        if let Some(e) = &error {
            dsl.push_str(&format!("\nKEY_LEARNINGS:\n  ADD:\n    - because it explains the last failure: {}\n", clean(e)));
            let old = archive("KL-");
            if !old.is_empty() {
                dsl.push_str("  ARCHIVE:\n");
                old.iter().for_each(|l| dsl.push_str(l));
            }
            self.recorded_error = error;
        }
        if self.files.len() > self.recorded_files {
            let recent: Vec<&str> = self.files.iter().rev().take(6).map(String::as_str).collect();
            dsl.push_str(&format!("\nVERBATIM_CONTEXT:\n  ADD:\n    - because these are the files in play: files touched => {}\n", clean(&recent.join(", "))));
            let old = archive("VC-");
            if !old.is_empty() {
                dsl.push_str("  ARCHIVE:\n");
                old.iter().for_each(|l| dsl.push_str(l));
            }
            self.recorded_files = self.files.len();
        }
        dsl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_step_names() {
        let found: Vec<&str> = paths("cat \"django/db/models.py\" && sed -n 1,20p tests/test_io.py; open(src/a.rs). Not v1.2 or a/b").collect();
        assert_eq!(found, ["django/db/models.py", "tests/test_io.py", "src/a.rs"]);
    }
}
