//! The names of the WIT enums' cases, as `wit/*.wit` spells them: one table per enum, which
//! the CLI's value parsers, the server, the agent's tools and compaction's records all read.
//! A name is matched with `_` and `-` alike (`in_progress` is `in-progress`), so the
//! snake_case that JSON arguments and older scripts use still names the case.

use crate::board::{ArtifactType, BoardStatus, DiscoveryType, Priority, ReviewStatus, TaskStatus, View};
use crate::history::{Strategy, Target};
use crate::{HistoryMode, Severity};

/// A WIT enum whose cases have names.
pub trait Named: Sized + Copy + PartialEq + 'static {
    /// Every case with its name, in the WIT file's order.
    const CASES: &'static [(Self, &'static str)];

    /// The case's name as the WIT file spells it.
    fn name(self) -> &'static str {
        Self::CASES.iter().find(|(case, _)| *case == self).map(|(_, name)| *name).expect("every case is in the table")
    }

    /// The case named `name` (`_` and `-` alike), if any.
    fn named(name: &str) -> Option<Self> {
        Self::CASES.iter().find(|(_, n)| matches(n, name)).map(|(case, _)| *case)
    }

    /// Every name, in order.
    fn names() -> impl Iterator<Item = &'static str> {
        Self::CASES.iter().map(|(_, name)| *name)
    }
}

/// Whether `given` spells `name`, with `_` for `-` where it likes.
pub fn matches(name: &str, given: &str) -> bool {
    name.len() == given.len() && name.bytes().zip(given.bytes()).all(|(a, b)| a == b || (a == b'-' && b == b'_'))
}

macro_rules! named {
    ($ty:ty { $($case:ident = $name:literal),+ $(,)? }) => {
        impl Named for $ty {
            const CASES: &'static [(Self, &'static str)] = &[$((<$ty>::$case, $name)),+];
        }
    };
}

named!(TaskStatus {
    Pending = "pending",
    Assigned = "assigned",
    InProgress = "in-progress",
    Blocked = "blocked",
    Review = "review",
    Completed = "completed",
    Failed = "failed",
    Cancelled = "cancelled",
});
named!(BoardStatus { Active = "active", Completed = "completed", Cancelled = "cancelled", Archived = "archived" });
named!(ReviewStatus { Approved = "approved", NeedsRework = "needs-rework", Rejected = "rejected" });
named!(DiscoveryType { Constraint = "constraint", Opportunity = "opportunity", Risk = "risk", Insight = "insight" });
named!(ArtifactType { File = "file", Code = "code", Document = "document", Config = "config", Test = "test" });
named!(Priority { Low = "low", Normal = "normal", High = "high" });
named!(Severity { Error = "error", Warning = "warning" });
named!(Target { Conversation = "conversation", Tools = "tools", All = "all" });
named!(Strategy { Summarize = "summarize", Archive = "archive" });

/// The `view` variant's cases by name; `stale` and `context-for-task` take an argument (the
/// empty string here stands for it).
pub static VIEWS: [(&str, View); 15] = [
    ("tasks", View::Tasks),
    ("ready", View::Ready),
    ("blocked", View::Blocked),
    ("in-progress", View::InProgress),
    ("needs-review", View::NeedsReview),
    ("failed", View::Failed),
    ("stranded", View::Stranded),
    ("stale", View::Stale(String::new())),
    ("context-for-task", View::ContextForTask(String::new())),
    ("contributions", View::Contributions),
    ("candidates", View::Candidates),
    ("decisions", View::Decisions),
    ("discoveries", View::Discoveries),
    ("artifacts", View::Artifacts),
    ("nudges", View::Nudges),
];

impl View {
    /// The view named `name` (`_` and `-` alike), given `arg` where it takes one.
    /// Errors: no view of that name, or one that takes an argument given none.
    pub fn named(name: &str, arg: Option<String>) -> Result<View, ViewError> {
        let (name, view) = VIEWS.iter().find(|(n, _)| matches(n, name)).ok_or_else(|| ViewError::Unknown(name.to_string()))?;
        let mut view = view.clone();
        if let View::Stale(a) | View::ContextForTask(a) = &mut view {
            *a = arg.ok_or(ViewError::NeedsArgument(name))?;
        }
        Ok(view)
    }

    /// Every view's name, in order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        VIEWS.iter().map(|(name, _)| *name)
    }
}

/// The `history-mode` variant's cases by name; `last-n`'s count is a setting of its own
/// (0 here stands for it).
pub const HISTORY_MODES: [(&str, HistoryMode); 4] =
    [("auto", HistoryMode::Auto), ("all", HistoryMode::All), ("active-turn", HistoryMode::ActiveTurn), ("last-n", HistoryMode::LastN(0))];

/// Why [`View::named`] found no view.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ViewError {
    #[error("no view {0:?}: {views}", views = View::names().collect::<Vec<_>>().join(", "))]
    Unknown(String),
    #[error("the {0} view needs its argument")]
    NeedsArgument(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Named + std::fmt::Debug>() {
        for (case, name) in T::CASES {
            assert_eq!(T::named(name), Some(*case));
            assert_eq!(T::named(&name.replace('-', "_")), Some(*case));
            assert_eq!(case.name(), *name);
        }
        assert_eq!(T::named("no-such-case"), None);
    }

    #[test]
    fn every_table_names_each_case_once() {
        check::<TaskStatus>();
        check::<ReviewStatus>();
        check::<BoardStatus>();
        check::<DiscoveryType>();
        check::<ArtifactType>();
        check::<Priority>();
        check::<Severity>();
        check::<Target>();
        check::<Strategy>();
    }

    /// The case names of `declaration` (`enum task-status`, `variant view`) in `wit`, in
    /// order, without their payloads or doc comments.
    fn wit_cases(wit: &str, declaration: &str) -> Vec<String> {
        let start = wit.find(&format!("{declaration} {{")).unwrap_or_else(|| panic!("{declaration} in the WIT"));
        let body = &wit[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
        body.lines()
            .map(|l| l.split("///").next().unwrap())
            .collect::<String>()
            .split(',')
            .map(|c| c.split('(').next().unwrap().trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    }

    /// The tables against the WIT files themselves: every enum's and variant's cases, in order.
    #[test]
    fn tables_are_the_wit_enums() {
        let wit = [include_str!("../wit/board.wit"), include_str!("../wit/history.wit"), include_str!("../wit/memory.wit"), include_str!("../wit/context.wit")]
            .concat();
        fn names<T: Named>() -> Vec<String> {
            T::names().map(String::from).collect()
        }
        assert_eq!(wit_cases(&wit, "enum task-status"), names::<TaskStatus>());
        assert_eq!(wit_cases(&wit, "enum review-status"), names::<ReviewStatus>());
        assert_eq!(wit_cases(&wit, "enum board-status"), names::<BoardStatus>());
        assert_eq!(wit_cases(&wit, "enum discovery-type"), names::<DiscoveryType>());
        assert_eq!(wit_cases(&wit, "enum artifact-type"), names::<ArtifactType>());
        assert_eq!(wit_cases(&wit, "enum priority"), names::<Priority>());
        assert_eq!(wit_cases(&wit, "enum severity"), names::<Severity>());
        assert_eq!(wit_cases(&wit, "enum target"), names::<Target>());
        assert_eq!(wit_cases(&wit, "enum strategy"), names::<Strategy>());
        assert_eq!(wit_cases(&wit, "variant view"), View::names().map(String::from).collect::<Vec<_>>());
        assert_eq!(wit_cases(&wit, "variant history-mode"), HISTORY_MODES.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>());
    }

    #[test]
    fn views_by_name() {
        assert_eq!(View::named("in_progress", None), Ok(View::InProgress));
        assert_eq!(View::named("stale", Some("t".into())), Ok(View::Stale("t".into())));
        assert_eq!(View::named("stale", None), Err(ViewError::NeedsArgument("stale")));
        assert!(matches!(View::named("state", None), Err(ViewError::Unknown(_))));
        for name in View::names() {
            assert!(View::named(name, Some("x".into())).is_ok(), "{name}");
        }
    }
}
