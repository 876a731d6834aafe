//! [`Op`]'s reader, written by hand. Derived, an internally tagged enum (`"op": "add_task"`
//! beside the fields) buffers the whole op in serde's `Content` before it knows the variant,
//! and compiles every variant's visitor a second time to read from that buffer: about 60 KB of
//! the component's code for 15 ops. This reader takes the fields as they come, in any order,
//! into one set of slots, and builds the variant the tag names. It accepts and refuses what the
//! derived reader did, with serde's own messages (the tests hold it to one derived there), with
//! two exceptions, neither of which the engine writes: an op as a JSON array, which the derived
//! reader also took; and a field of another op given a type that op would not take (a `status`
//! of 3 on `archive`), which the derived reader ignored, as it ignores fields no op has, and
//! which this one refuses, since a field's type is known by its name before the tag is.

use super::{ArtifactType, BoardStatus, DiscoveryType, NudgeTarget, Op, Priority, ReviewStatus, TaskStatus};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, IntoDeserializer, MapAccess, Visitor};
use std::fmt;

/// The tags, as `unknown variant` lists them.
const OPS: &[&str] = &[
    "add_task",
    "add_dependency",
    "assign",
    "heartbeat",
    "reclaim",
    "set_status",
    "complete",
    "review",
    "decide",
    "discover",
    "artifact",
    "nudge",
    "approve",
    "close",
    "archive",
];

/// Every field of every op, each at most once. `status` and `kind` name a different enum in
/// each op that has them, so they are kept as text until the tag is known.
#[derive(Default)]
struct Slots {
    op: Option<Tag>,
    title: Option<String>,
    description: Option<String>,
    depends_on: Option<Vec<String>>,
    needs_review: Option<bool>,
    task: Option<String>,
    on: Option<String>,
    agent: Option<String>,
    stale_before: Option<String>,
    status: Option<String>,
    summary: Option<String>,
    next_steps: Option<Vec<String>>,
    comments: Option<String>,
    question: Option<String>,
    choice: Option<String>,
    alternatives: Option<Vec<String>>,
    rationale: Option<String>,
    affects_tasks: Option<Vec<String>>,
    reversible: Option<bool>,
    content: Option<String>,
    kind: Option<String>,
    /// Missing and `null` both read as `None`, as serde reads an `Option` field.
    promote_to_core: Option<Option<String>>,
    path: Option<String>,
    checksum: Option<String>,
    target: Option<NudgeTarget>,
    message: Option<String>,
    priority: Option<Priority>,
    decision: Option<String>,
}

/// Fills `slot` from the map's next value, refusing a field given twice. Not inlined: one copy
/// per type of field, where inlined it was one per field (half the reader's code).
#[inline(never)]
fn fill<'de, T: Deserialize<'de>, M: MapAccess<'de>>(map: &mut M, slot: &mut Option<T>, name: &'static str) -> Result<(), M::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

/// A field kept as text, read as the enum its op gives it.
fn named<'de, T: Deserialize<'de>, E: de::Error>(slot: Option<String>, name: &'static str) -> Result<T, E> {
    T::deserialize(required::<String, E>(slot, name)?.into_deserializer())
}

/// The `op` field: one of [`OPS`], refused as soon as it is read otherwise.
struct Tag(&'static str);

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tag, D::Error> {
        deserializer.deserialize_identifier(TagVisitor)
    }
}

struct TagVisitor;

impl Visitor<'_> for TagVisitor {
    type Value = Tag;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_str<E: de::Error>(self, tag: &str) -> Result<Tag, E> {
        OPS.iter().find(|op| **op == tag).map(|op| Tag(op)).ok_or_else(|| E::unknown_variant(tag, OPS))
    }
}

struct OpVisitor;

impl<'de> Visitor<'de> for OpVisitor {
    type Value = Op;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a board op")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Op, M::Error> {
        let mut s = Slots::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "op" => fill(&mut map, &mut s.op, "op")?,
                "title" => fill(&mut map, &mut s.title, "title")?,
                "description" => fill(&mut map, &mut s.description, "description")?,
                "depends_on" => fill(&mut map, &mut s.depends_on, "depends_on")?,
                "needs_review" => fill(&mut map, &mut s.needs_review, "needs_review")?,
                "task" => fill(&mut map, &mut s.task, "task")?,
                "on" => fill(&mut map, &mut s.on, "on")?,
                "agent" => fill(&mut map, &mut s.agent, "agent")?,
                "stale_before" => fill(&mut map, &mut s.stale_before, "stale_before")?,
                "status" => fill(&mut map, &mut s.status, "status")?,
                "summary" => fill(&mut map, &mut s.summary, "summary")?,
                "next_steps" => fill(&mut map, &mut s.next_steps, "next_steps")?,
                "comments" => fill(&mut map, &mut s.comments, "comments")?,
                "question" => fill(&mut map, &mut s.question, "question")?,
                "choice" => fill(&mut map, &mut s.choice, "choice")?,
                "alternatives" => fill(&mut map, &mut s.alternatives, "alternatives")?,
                "rationale" => fill(&mut map, &mut s.rationale, "rationale")?,
                "affects_tasks" => fill(&mut map, &mut s.affects_tasks, "affects_tasks")?,
                "reversible" => fill(&mut map, &mut s.reversible, "reversible")?,
                "content" => fill(&mut map, &mut s.content, "content")?,
                "kind" => fill(&mut map, &mut s.kind, "kind")?,
                "promote_to_core" => fill(&mut map, &mut s.promote_to_core, "promote_to_core")?,
                "path" => fill(&mut map, &mut s.path, "path")?,
                "checksum" => fill(&mut map, &mut s.checksum, "checksum")?,
                "target" => fill(&mut map, &mut s.target, "target")?,
                "message" => fill(&mut map, &mut s.message, "message")?,
                "priority" => fill(&mut map, &mut s.priority, "priority")?,
                "decision" => fill(&mut map, &mut s.decision, "decision")?,
                // Fields no op has are ignored, as the derived reader ignored them.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Tag(tag) = required::<Tag, M::Error>(s.op, "op")?;
        Ok(match tag {
            "add_task" => Op::AddTask {
                title: required(s.title, "title")?,
                description: required(s.description, "description")?,
                depends_on: required(s.depends_on, "depends_on")?,
                needs_review: required(s.needs_review, "needs_review")?,
            },
            "add_dependency" => Op::AddDependency { task: required(s.task, "task")?, on: required(s.on, "on")? },
            "assign" => Op::Assign { task: required(s.task, "task")?, agent: required(s.agent, "agent")? },
            "heartbeat" => Op::Heartbeat { task: required(s.task, "task")? },
            "reclaim" => Op::Reclaim { task: required(s.task, "task")?, stale_before: required(s.stale_before, "stale_before")? },
            "set_status" => Op::SetStatus { task: required(s.task, "task")?, status: named::<TaskStatus, _>(s.status, "status")? },
            "complete" => {
                Op::Complete { task: required(s.task, "task")?, summary: required(s.summary, "summary")?, next_steps: required(s.next_steps, "next_steps")? }
            }
            "review" => Op::Review {
                task: required(s.task, "task")?,
                status: named::<ReviewStatus, _>(s.status, "status")?,
                comments: required(s.comments, "comments")?,
            },
            "decide" => Op::Decide {
                question: required(s.question, "question")?,
                choice: required(s.choice, "choice")?,
                alternatives: required(s.alternatives, "alternatives")?,
                rationale: required(s.rationale, "rationale")?,
                affects_tasks: required(s.affects_tasks, "affects_tasks")?,
                reversible: required(s.reversible, "reversible")?,
            },
            "discover" => Op::Discover {
                content: required(s.content, "content")?,
                kind: named::<DiscoveryType, _>(s.kind, "kind")?,
                affects_tasks: required(s.affects_tasks, "affects_tasks")?,
                promote_to_core: s.promote_to_core.flatten(),
            },
            "artifact" => Op::Artifact {
                kind: named::<ArtifactType, _>(s.kind, "kind")?,
                path: required(s.path, "path")?,
                description: required(s.description, "description")?,
                task: required(s.task, "task")?,
                checksum: required(s.checksum, "checksum")?,
            },
            "nudge" => {
                Op::Nudge { target: required(s.target, "target")?, message: required(s.message, "message")?, priority: required(s.priority, "priority")? }
            }
            "approve" => Op::Approve { decision: required(s.decision, "decision")? },
            "close" => Op::Close { status: named::<BoardStatus, _>(s.status, "status")? },
            "archive" => Op::Archive,
            _ => unreachable!("a tag is one of OPS"),
        })
    }
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Op, D::Error> {
        deserializer.deserialize_map(OpVisitor)
    }
}

#[cfg(test)]
mod tests {
    //! The reader against the one serde derives for the same enum: the same ops read, the same
    //! inputs refused.
    use super::*;
    use serde::Serialize;

    /// `Op` as it was declared with `#[derive(Deserialize)]`, read and then written as `Op`.
    #[derive(serde::Deserialize, Serialize)]
    #[serde(tag = "op", rename_all = "snake_case")]
    enum Derived {
        AddTask { title: String, description: String, depends_on: Vec<String>, needs_review: bool },
        AddDependency { task: String, on: String },
        Assign { task: String, agent: String },
        Heartbeat { task: String },
        Reclaim { task: String, stale_before: String },
        SetStatus { task: String, status: TaskStatus },
        Complete { task: String, summary: String, next_steps: Vec<String> },
        Review { task: String, status: ReviewStatus, comments: String },
        Decide { question: String, choice: String, alternatives: Vec<String>, rationale: String, affects_tasks: Vec<String>, reversible: bool },
        Discover { content: String, kind: DiscoveryType, affects_tasks: Vec<String>, promote_to_core: Option<String> },
        Artifact { kind: ArtifactType, path: String, description: String, task: String, checksum: String },
        Nudge { target: NudgeTarget, message: String, priority: Priority },
        Approve { decision: String },
        Close { status: BoardStatus },
        Archive,
    }

    fn both(json: &str) -> (Result<Op, String>, Result<Op, String>) {
        let ours = serde_json::from_str::<Op>(json).map_err(|e| e.to_string());
        let derived =
            serde_json::from_str::<Derived>(json).map(|d| serde_json::from_value::<Op>(serde_json::to_value(d).unwrap()).unwrap()).map_err(|e| e.to_string());
        (ours, derived)
    }

    #[test]
    fn every_op_reads_as_the_derived_reader_read_it() {
        let ops = [
            r#"{"op":"add_task","title":"t","description":"d","depends_on":["T-1"],"needs_review":true}"#,
            r#"{"needs_review":false,"depends_on":[],"description":"","title":"late tag","op":"add_task"}"#,
            r#"{"op":"add_dependency","task":"T-2","on":"T-1"}"#,
            r#"{"op":"assign","task":"T-1","agent":"w","extra":{"a":[1,2,{"b":null}]}}"#,
            r#"{"op":"heartbeat","task":"T-1"}"#,
            r#"{"op":"reclaim","task":"T-1","stale_before":"2026-12-03T00:00:00Z"}"#,
            r#"{"op":"set_status","task":"T-1","status":"in_progress"}"#,
            r#"{"op":"complete","task":"T-1","summary":"s","next_steps":["a","b"]}"#,
            r#"{"op":"review","task":"T-1","status":"needs_rework","comments":"c"}"#,
            r#"{"op":"decide","question":"q","choice":"c","alternatives":[],"rationale":"r","affects_tasks":["T-1"],"reversible":false}"#,
            r#"{"op":"discover","content":"c","kind":"risk","affects_tasks":[]}"#,
            r#"{"op":"discover","content":"c","kind":"insight","affects_tasks":[],"promote_to_core":null}"#,
            r#"{"op":"discover","content":"c","kind":"insight","affects_tasks":[],"promote_to_core":"KL-1"}"#,
            r#"{"op":"artifact","kind":"code","path":"a.rs","description":"d","task":"T-1","checksum":"sha256:0"}"#,
            r#"{"op":"nudge","target":{"agent":"w"},"message":"m","priority":"high"}"#,
            r#"{"op":"nudge","target":"orchestrator","message":"m","priority":"low"}"#,
            r#"{"op":"approve","decision":"D-1"}"#,
            r#"{"op":"close","status":"completed"}"#,
            r#"{"op":"archive"}"#,
            r#"{"op":"archive","status":"ignored"}"#,
        ];
        for json in ops {
            let (ours, derived) = both(json);
            assert!(ours.is_ok(), "{json}: {ours:?}");
            assert_eq!(ours, derived, "{json}");
        }
    }

    #[test]
    fn what_the_derived_reader_refused_is_refused_with_its_words() {
        let refused = [
            r#"{"title":"no tag"}"#,
            r#"{"op":"paint","task":"T-1"}"#,
            r#"{"op":7}"#,
            r#"{"op":"add_task","title":7}"#,
            r#"{"op":"add_task","title":"t","description":"d","depends_on":[]}"#,
            r#"{"op":"set_status","task":"T-1","status":"approved"}"#,
            r#"{"op":"review","task":"T-1","status":"in_progress","comments":""}"#,
            r#"{"op":"close","status":"nope"}"#,
            r#"{"op":"discover","content":"c","kind":"file","affects_tasks":[]}"#,
            r#"{"op":"artifact","kind":"risk","path":"p","description":"d","task":"T-1","checksum":"c"}"#,
            r#"{"op":"nudge","target":"nobody","message":"m","priority":"high"}"#,
            r#"{"op":"heartbeat"}"#,
            r#""archive""#,
        ];
        for json in refused {
            let (ours, derived) = both(json);
            let (ours, derived) = (ours.unwrap_err(), derived.unwrap_err());
            // serde_json adds where it stopped; the derived reader stops at the end of the op,
            // having buffered it, where this one may stop inside it.
            // It expects "a board op", where the derived one named the type.
            let words = |e: &str| e.split(" at line ").next().unwrap().replace("internally tagged enum Derived", "a board op");
            assert_eq!(words(&ours), words(&derived), "{json}");
        }
    }

    #[test]
    fn a_status_not_text_is_refused_as_such() {
        // The derived reader said "expected string or map", a unit variant's two forms from its
        // buffer; text is the only form a status has.
        let (ours, derived) = both(r#"{"op":"close","status":3}"#);
        assert!(ours.unwrap_err().starts_with("invalid type: integer `3`, expected a string"));
        assert!(derived.is_err());
    }

    #[test]
    fn an_op_is_an_object() {
        // The derived reader also took an array, the tag first and the fields in the order they
        // are declared; nothing writes one, and the order is not part of any documented form.
        let (ours, derived) = both(r#"["heartbeat","T-1"]"#);
        assert!(ours.unwrap_err().starts_with("invalid type: sequence, expected a board op"));
        assert!(derived.is_ok());
    }

    #[test]
    fn another_ops_field_of_the_wrong_type_is_refused() {
        let (ours, derived) = both(r#"{"op":"heartbeat","task":"T-1","needs_review":"yes"}"#);
        assert!(ours.unwrap_err().starts_with("invalid type: string \"yes\", expected a boolean"));
        assert!(derived.is_ok());
    }

    #[test]
    fn a_field_given_twice_is_refused() {
        let twice = r#"{"op":"heartbeat","task":"T-1","task":"T-2"}"#;
        assert!(serde_json::from_str::<Op>(twice).unwrap_err().to_string().starts_with("duplicate field `task`"));
    }
}
