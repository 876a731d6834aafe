//! The shared task board's rules (spec 002): transitions, dependencies and cycles, views,
//! partial failures, a worker's context, contributions, learning candidates; every refused op
//! changes nothing, and the board rebuilds from its ops.

use workmem_guest::board::{
    ArtifactType, Board, BoardError, BoardStatus, DiscoveryType, NudgeTarget, Op, Priority, ReplayError, ReviewStatus, TaskStatus, View, limits,
};

const NOW: &str = "2026-11-23T10:00:00Z";

fn board() -> Board {
    Board::new("auth", "Implement auth system", "Add JWT authentication to the API", vec!["No breaking changes".into()], vec!["auth-jwt".into()], NOW).unwrap()
}

fn add(b: &mut Board, title: &str, deps: &[&str], review: bool) -> String {
    let op = Op::AddTask { title: title.into(), description: String::new(), depends_on: deps.iter().map(|d| d.to_string()).collect(), needs_review: review };
    b.apply("orchestrator", NOW, &op).unwrap();
    b.tasks.last().unwrap().id.clone()
}

fn set(b: &mut Board, who: &str, task: &str, status: TaskStatus) -> Result<(), BoardError> {
    b.apply(who, NOW, &Op::SetStatus { task: task.into(), status }).map(drop)
}

fn ids<'a>(tasks: impl IntoIterator<Item = &'a workmem_guest::board::Task>) -> Vec<&'a str> {
    tasks.into_iter().map(|t| t.id.as_str()).collect()
}

/// Applies `op`, which must be refused with `expected`, and checks nothing changed.
fn refused(b: &mut Board, op: Op, expected: BoardError) {
    let before = b.clone();
    assert_eq!(b.apply("worker-1", NOW, &op), Err(expected));
    assert_eq!(*b, before, "a refused op changed the board");
}

#[test]
fn tasks_move_only_along_legal_transitions_and_wait_for_their_dependencies() {
    let mut b = board();
    let schema = add(&mut b, "Design token schema", &[], false);
    let service = add(&mut b, "Token service", &[&schema], true);
    assert_eq!(b.task(&schema).unwrap().blocks, vec![service.clone()]);
    assert_eq!(ids(b.ready()), vec![schema.as_str()]);
    assert_eq!(ids(b.blocked()), vec![service.as_str()]);

    refused(
        &mut b,
        Op::SetStatus { task: service.clone(), status: TaskStatus::InProgress },
        BoardError::Waiting { task: service.clone(), on: vec![schema.clone()] },
    );
    refused(
        &mut b,
        Op::SetStatus { task: schema.clone(), status: TaskStatus::Completed },
        BoardError::IllegalTransition { task: schema.clone(), from: TaskStatus::Pending, to: TaskStatus::Completed },
    );
    refused(&mut b, Op::SetStatus { task: "T-9".into(), status: TaskStatus::Blocked }, BoardError::UnknownTask("T-9".into()));

    b.apply("orchestrator", NOW, &Op::Assign { task: schema.clone(), agent: "dev".into() }).unwrap();
    set(&mut b, "dev", &schema, TaskStatus::InProgress).unwrap();
    assert_eq!(ids(b.in_progress()), vec![schema.as_str()]);
    b.apply("dev", NOW, &Op::Complete { task: schema.clone(), summary: "claims: sub, exp, scope".into(), next_steps: vec![] }).unwrap();
    assert_eq!(b.task(&schema).unwrap().status, TaskStatus::Completed, "no review needed");
    refused(
        &mut b,
        Op::SetStatus { task: schema.clone(), status: TaskStatus::Pending },
        BoardError::IllegalTransition { task: schema.clone(), from: TaskStatus::Completed, to: TaskStatus::Pending },
    );

    // Starting an unassigned task claims it; one that needs review goes to review.
    set(&mut b, "qa", &service, TaskStatus::InProgress).unwrap();
    assert_eq!(b.task(&service).unwrap().assigned_to.as_deref(), Some("qa"));
    refused(&mut b, Op::Complete { task: service.clone(), summary: " ".into(), next_steps: vec![] }, BoardError::Empty("summary".into()));
    b.apply("qa", NOW, &Op::Complete { task: service.clone(), summary: "RS256 signing".into(), next_steps: vec!["middleware".into()] }).unwrap();
    assert_eq!(ids(b.needs_review()), vec![service.as_str()]);
    b.apply("lead", NOW, &Op::Review { task: service.clone(), status: ReviewStatus::NeedsRework, comments: "use HS256".into() }).unwrap();
    assert_eq!(b.task(&service).unwrap().status, TaskStatus::InProgress);
    b.apply("qa", NOW, &Op::Complete { task: service.clone(), summary: "HS256 signing".into(), next_steps: vec![] }).unwrap();
    b.apply("lead", NOW, &Op::Review { task: service.clone(), status: ReviewStatus::Approved, comments: "good".into() }).unwrap();
    let t = b.task(&service).unwrap();
    assert_eq!((t.status, t.reviewed_by.as_deref(), t.review_status), (TaskStatus::Completed, Some("lead"), Some(ReviewStatus::Approved)));
    refused(
        &mut b,
        Op::Review { task: service.clone(), status: ReviewStatus::Approved, comments: String::new() },
        BoardError::NeedsReview(format!("task {service} is completed, not in review")),
    );
}

#[test]
fn a_dependency_that_would_close_a_cycle_is_refused_naming_it() {
    let mut b = board();
    let a = add(&mut b, "a", &[], false);
    let c = add(&mut b, "b", &[&a], false);
    let d = add(&mut b, "c", &[&c], false);
    refused(&mut b, Op::AddDependency { task: a.clone(), on: d.clone() }, BoardError::Cycle(vec![a.clone(), d.clone(), c.clone(), a.clone()]));
    refused(&mut b, Op::AddDependency { task: a.clone(), on: a.clone() }, BoardError::Cycle(vec![a.clone(), a.clone()]));
    let e = add(&mut b, "d", &[], false);
    b.apply("orchestrator", NOW, &Op::AddDependency { task: e.clone(), on: d.clone() }).unwrap();
    assert_eq!(b.task(&d).unwrap().blocks, vec![e.clone()]);
    assert_eq!(BoardError::Cycle(vec![a.clone(), d, c, a]).to_string(), "that dependency would close a cycle: T-1 -> T-3 -> T-2 -> T-1");
}

/// A chain of 50,000 tasks: closing it into a cycle is refused naming all of it, not a
/// stack overflow (the recursive walk overflowed a test thread's stack here, and trapped the
/// engine, whose stack is smaller, at 3,000).
#[test]
fn a_cycle_through_a_long_chain_is_found() {
    let mut b = board();
    let first = add(&mut b, "t", &[], false);
    let mut last = first.clone();
    for _ in 1..50_000 {
        last = add(&mut b, "t", &[&last], false);
    }
    let before = b.clone();
    match b.apply("orchestrator", NOW, &Op::AddDependency { task: first.clone(), on: last.clone() }) {
        Err(BoardError::Cycle(ids)) => {
            assert_eq!(ids.len(), 50_001);
            assert_eq!((ids.first(), ids.get(1), ids.last()), (Some(&first), Some(&last), Some(&first)));
        }
        other => panic!("want a cycle, got {other:?}"),
    }
    assert_eq!(b, before);
}

#[test]
fn a_failed_task_and_everything_that_depends_on_it_are_visible() {
    let mut b = board();
    let a = add(&mut b, "migrate", &[], false);
    let c = add(&mut b, "backfill", &[&a], false);
    let d = add(&mut b, "switch reads", &[&c], false);
    set(&mut b, "dev", &a, TaskStatus::InProgress).unwrap();
    set(&mut b, "dev", &a, TaskStatus::Failed).unwrap();
    assert_eq!(ids(b.failed()), vec![a.as_str()]);
    let stranded: Vec<(&str, Vec<String>)> = b.stranded().into_iter().map(|(t, causes)| (t.id.as_str(), causes)).collect();
    assert_eq!(stranded, vec![(c.as_str(), vec![a.clone()]), (d.as_str(), vec![a.clone()])]);
    assert_eq!(ids(b.blocked()), vec![c.as_str(), d.as_str()]);
    // A retry: failed back to pending clears it.
    set(&mut b, "orchestrator", &a, TaskStatus::Pending).unwrap();
    assert!(b.stranded().is_empty());
}

#[test]
fn a_worker_gets_its_tasks_context_and_its_nudges() {
    let mut b = board();
    let a = add(&mut b, "schema", &[], false);
    let c = add(&mut b, "service", &[&a], false);
    b.apply("orchestrator", NOW, &Op::Assign { task: c.clone(), agent: "dev".into() }).unwrap();
    let decide = |affects: &str| Op::Decide {
        question: "Which JWT library?".into(),
        choice: "jose".into(),
        alternatives: vec!["jsonwebtoken".into()],
        rationale: "modern, typed".into(),
        affects_tasks: vec![affects.into()],
        reversible: true,
    };
    b.apply("dev", NOW, &decide(&c)).unwrap();
    b.apply("dev", NOW, &decide(&a)).unwrap();
    b.apply(
        "dev",
        NOW,
        &Op::Discover { content: "no refresh_token column".into(), kind: DiscoveryType::Constraint, affects_tasks: vec![c.clone()], promote_to_core: None },
    )
    .unwrap();
    b.apply(
        "dev",
        NOW,
        &Op::Artifact {
            kind: ArtifactType::Code,
            path: "schema/tokens.sql".into(),
            description: "token table".into(),
            task: a.clone(),
            checksum: "sha256:1".into(),
        },
    )
    .unwrap();
    b.apply(
        "dev",
        NOW,
        &Op::Artifact {
            kind: ArtifactType::Code,
            path: "schema/tokens.sql".into(),
            description: "token table, v2".into(),
            task: a.clone(),
            checksum: "sha256:2".into(),
        },
    )
    .unwrap();
    for target in [NudgeTarget::Agent("dev".into()), NudgeTarget::Agent("qa".into()), NudgeTarget::Orchestrator, NudgeTarget::All] {
        b.apply("human", NOW, &Op::Nudge { target, message: "use a separate token table".into(), priority: Priority::High }).unwrap();
    }
    let cx = b.context_for_task(&c).unwrap();
    assert_eq!(cx.goal, "Add JWT authentication to the API");
    assert_eq!(cx.constraints, vec!["No breaking changes"]);
    assert_eq!(ids(&cx.dependencies), vec![a.as_str()]);
    assert_eq!(cx.decisions.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), vec!["D-1"]);
    assert_eq!(cx.discoveries.len(), 1);
    assert_eq!(cx.artifacts.iter().map(|a| (a.id.as_str(), a.version)).collect::<Vec<_>>(), vec![("A-1", 1), ("A-2", 2)]);
    assert_eq!(cx.nudges.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), vec!["N-1", "N-4"]);
    assert_eq!(b.context_for_task("T-7").unwrap_err(), BoardError::UnknownTask("T-7".into()));

    let brief = b.brief(&c).unwrap();
    assert!(brief.starts_with("Goal: Add JWT authentication to the API\nConstraint: No breaking changes\n\n## Your task T-2: service (assigned)\n"), "{brief}");
    assert!(brief.contains("\n## Decisions\n- D-1 Which JWT library?: jose, because modern, typed\n"), "{brief}");
    assert!(brief.contains("- A-2 schema/tokens.sql v2 (sha256:2): token table, v2\n"), "{brief}");
    assert!(
        brief.ends_with(
            "## Nudges\n- N-1 from human (high priority): use a separate token table\n- N-4 from human (high priority): use a separate token table\n"
        ),
        "{brief}"
    );
}

#[test]
fn contributions_and_learning_candidates_come_from_the_records() {
    let mut b = board();
    let a = add(&mut b, "Design token schema", &[], false);
    b.apply(
        "dev",
        "2026-11-23T10:01:00Z",
        &Op::Decide {
            question: "Which JWT library?".into(),
            choice: "jose".into(),
            alternatives: vec!["jsonwebtoken".into(), "jwt-simple".into()],
            rationale: "better TypeScript support".into(),
            affects_tasks: vec![],
            reversible: true,
        },
    )
    .unwrap();
    b.apply(
        "dev",
        NOW,
        &Op::Decide {
            question: "Tabs?".into(),
            choice: "spaces".into(),
            alternatives: vec![],
            rationale: String::new(),
            affects_tasks: vec![],
            reversible: true,
        },
    )
    .unwrap();
    b.apply(
        "qa",
        NOW,
        &Op::Discover {
            content: "refresh tokens need rotation".into(),
            kind: DiscoveryType::Insight,
            affects_tasks: vec![],
            promote_to_core: Some("auth-jwt".into()),
        },
    )
    .unwrap();
    b.apply("qa", NOW, &Op::Discover { content: "CI is slow".into(), kind: DiscoveryType::Risk, affects_tasks: vec![], promote_to_core: None }).unwrap();
    set(&mut b, "dev", &a, TaskStatus::InProgress).unwrap();
    b.apply("dev", "2026-11-23T10:05:00Z", &Op::Complete { task: a.clone(), summary: "claims sub, exp, scope".into(), next_steps: vec![] }).unwrap();
    b.apply("lead", NOW, &Op::Approve { decision: "D-1".into() }).unwrap();
    refused(&mut b, Op::Approve { decision: "D-9".into() }, BoardError::UnknownDecision("D-9".into()));
    assert_eq!(b.decisions[0].approved_by.as_deref(), Some("lead"));

    let contributions = b.contributions();
    assert_eq!(contributions.iter().map(|c| c.agent_id.as_str()).collect::<Vec<_>>(), vec!["dev", "qa"]);
    let dev = &contributions[0];
    assert_eq!((dev.tasks_completed.clone(), dev.decisions_made.clone()), (vec![a.clone()], vec!["D-1".to_string(), "D-2".to_string()]));
    assert_eq!((dev.first_contribution.as_str(), dev.last_contribution.as_str()), (NOW, "2026-11-23T10:05:00Z"));

    let candidates = b.candidates();
    let found: Vec<(&str, &str, Option<&str>)> = candidates.iter().map(|c| (c.kind, c.source.as_str(), c.suggested_core.as_deref())).collect();
    assert_eq!(found, vec![("decision", "D-1", None), ("insight", "F-1", Some("auth-jwt")), ("pattern", "T-1", None)]);
    assert_eq!(b.candidates()[0].text, "Which JWT library?: jose (rather than jsonwebtoken, jwt-simple), because better TypeScript support");
}

#[test]
fn a_closed_board_takes_only_archiving_and_an_archived_one_nothing() {
    let mut b = board();
    add(&mut b, "a", &[], false);
    refused(&mut b, Op::Close { status: BoardStatus::Archived }, BoardError::NotAnEnding(BoardStatus::Archived));
    assert_eq!(BoardError::NotAnEnding(BoardStatus::Active).to_string(), "a board closes as completed or cancelled, not active");
    b.apply("orchestrator", NOW, &Op::Close { status: BoardStatus::Completed }).unwrap();
    refused(
        &mut b,
        Op::AddTask { title: "late".into(), description: String::new(), depends_on: vec![], needs_review: false },
        BoardError::Closed(BoardStatus::Completed),
    );
    b.apply("orchestrator", NOW, &Op::Archive).unwrap();
    refused(&mut b, Op::Archive, BoardError::Closed(BoardStatus::Archived));
    assert_eq!(b.status, BoardStatus::Archived);
}

#[test]
fn empty_required_fields_are_refused_by_name() {
    let mut b = board();
    let a = add(&mut b, "a", &[], false);
    refused(&mut b, Op::AddTask { title: "".into(), description: String::new(), depends_on: vec![], needs_review: false }, BoardError::Empty("title".into()));
    refused(
        &mut b,
        Op::AddTask { title: "x".into(), description: String::new(), depends_on: vec!["T-8".into()], needs_review: false },
        BoardError::UnknownTask("T-8".into()),
    );
    refused(&mut b, Op::Assign { task: a.clone(), agent: "".into() }, BoardError::Empty("agent".into()));
    refused(&mut b, Op::Nudge { target: NudgeTarget::All, message: "\n".into(), priority: Priority::Normal }, BoardError::Empty("message".into()));
    refused(
        &mut b,
        Op::Artifact { kind: ArtifactType::File, path: "x".into(), description: String::new(), task: a.clone(), checksum: "".into() },
        BoardError::Empty("checksum".into()),
    );
    assert_eq!(Board::new("b", "n", " ", vec![], vec![], NOW).unwrap_err(), BoardError::Empty("goal".into()));
    assert_eq!(BoardError::Empty("title".into()).to_string(), "title is empty; it is required");
}

#[test]
fn a_board_rebuilds_from_its_event_log_and_round_trips_as_json() {
    let mut b = board();
    let mut log: Vec<String> = Vec::new();
    let mut apply = |b: &mut Board, who: &str, op: Op| {
        if let Ok(event) = b.apply(who, NOW, &op) {
            log.push(event.to_json());
        }
    };
    apply(&mut b, "orchestrator", Op::AddTask { title: "a".into(), description: "first".into(), depends_on: vec![], needs_review: true });
    apply(&mut b, "orchestrator", Op::AddTask { title: "b".into(), description: String::new(), depends_on: vec!["T-1".into()], needs_review: false });
    apply(&mut b, "orchestrator", Op::AddDependency { task: "T-1".into(), on: "T-2".into() }); // a cycle: refused, not logged
    apply(&mut b, "dev", Op::SetStatus { task: "T-1".into(), status: TaskStatus::InProgress });
    apply(&mut b, "dev", Op::Complete { task: "T-1".into(), summary: "done".into(), next_steps: vec![] });
    apply(&mut b, "human", Op::Nudge { target: NudgeTarget::Agent("dev".into()), message: "hurry".into(), priority: Priority::Low });
    assert_eq!(b.revision, 5);
    assert_eq!(log.len(), 5);
    assert_eq!(
        log[0],
        r#"{"revision":1,"actor":"orchestrator","at":"2026-11-23T10:00:00Z","op":{"op":"add_task","title":"a","description":"first","depends_on":[],"needs_review":true}}"#
    );

    let mut rebuilt = board();
    assert_eq!(rebuilt.replay(&log[1]), Err(ReplayError::OutOfOrder(1)));
    assert!(matches!(rebuilt.replay("{\"revision\":1}"), Err(ReplayError::Malformed(_))));
    for line in &log {
        rebuilt.replay(line).unwrap();
    }
    assert_eq!(rebuilt, b);
    // An event that does not fit the board it is replayed onto is refused, not forced.
    let mut other = board();
    other.apply("x", NOW, &Op::AddTask { title: "x".into(), description: String::new(), depends_on: vec![], needs_review: false }).unwrap();
    set(&mut other, "x", "T-1", TaskStatus::Cancelled).unwrap();
    assert_eq!(
        other.replay(&log[2]),
        Err(ReplayError::Refused(BoardError::IllegalTransition { task: "T-1".into(), from: TaskStatus::Cancelled, to: TaskStatus::InProgress }))
    );

    let json = serde_json::to_string(&b).unwrap();
    assert_eq!(serde_json::from_str::<Board>(&json).unwrap(), b);
    assert!(json.starts_with("{\"format\":\"workmem-board/1\""));
}

#[test]
fn a_claim_is_a_lease_its_holder_renews_and_anyone_may_reclaim_once_stale() {
    let mut b = board();
    let a = add(&mut b, "a", &[], false);
    b.apply("orchestrator", "2026-11-23T10:00:00Z", &Op::Assign { task: a.clone(), agent: "dev".into() }).unwrap();
    set(&mut b, "dev", &a, TaskStatus::InProgress).unwrap();
    refused(&mut b, Op::Heartbeat { task: a.clone() }, BoardError::Claimed { task: a.clone(), by: "dev".into(), since: NOW.into() });
    b.apply("dev", "2026-11-23T10:10:00Z", &Op::Heartbeat { task: a.clone() }).unwrap();
    assert!(b.stale("2026-11-23T10:10:00Z").is_empty());
    assert_eq!(ids(b.stale("2026-11-23T10:10:01Z")), vec![a.as_str()]);
    refused(
        &mut b,
        Op::Reclaim { task: a.clone(), stale_before: "2026-11-23T10:05:00Z".into() },
        BoardError::Claimed { task: a.clone(), by: "dev".into(), since: "2026-11-23T10:10:00Z".into() },
    );
    b.apply("orchestrator", NOW, &Op::Reclaim { task: a.clone(), stale_before: "2026-11-23T10:20:00Z".into() }).unwrap();
    let t = b.task(&a).unwrap();
    assert_eq!((t.status, t.assigned_to.as_deref()), (TaskStatus::Pending, None));
    assert_eq!(ids(b.ready()), vec![a.as_str()]);
    refused(
        &mut b,
        Op::Reclaim { task: a.clone(), stale_before: "2026-11-23T10:20:00Z".into() },
        BoardError::IllegalTransition { task: a.clone(), from: TaskStatus::Pending, to: TaskStatus::Pending },
    );
}

#[test]
fn every_size_a_writer_controls_is_capped_by_name() {
    let mut b = board();
    let long = "x".repeat(limits::MAX_TEXT + 1);
    refused(
        &mut b,
        Op::AddTask { title: long.clone(), description: String::new(), depends_on: vec![], needs_review: false },
        BoardError::TooLarge { field: "title".into(), limit: limits::MAX_TEXT },
    );
    let nudge = Op::Nudge { target: NudgeTarget::All, message: "m".into(), priority: Priority::Low };
    assert_eq!(b.apply(&long, NOW, &nudge), Err(BoardError::TooLarge { field: "actor".into(), limit: limits::MAX_TEXT }));
    assert_eq!(b.revision, 0);
    let many = vec!["T-1".to_string(); limits::MAX_LIST + 1];
    refused(
        &mut b,
        Op::AddTask { title: "t".into(), description: String::new(), depends_on: many, needs_review: false },
        BoardError::TooLarge { field: "depends_on".into(), limit: limits::MAX_LIST },
    );
    assert_eq!(BoardError::TooLarge { field: "title".into(), limit: limits::MAX_TEXT }.to_string(), "title is over the board's limit of 16384");
    assert_eq!(Board::new("b", "n", &long, vec![], vec![], NOW).unwrap_err(), BoardError::TooLarge { field: "goal".into(), limit: limits::MAX_TEXT });
}

#[test]
fn ops_come_in_as_the_logs_json_and_views_go_out_by_name() {
    let mut b = board();
    let event = b.apply_json("orchestrator", NOW, r#"{"op": "add_task", "title": "a", "description": "", "depends_on": [], "needs_review": false}"#).unwrap();
    assert_eq!(event.op, Op::AddTask { title: "a".into(), description: String::new(), depends_on: vec![], needs_review: false });
    let refused = b.apply_json("orchestrator", NOW, r#"{"op": "add_task", "title": 7}"#).unwrap_err();
    assert!(matches!(&refused, BoardError::InvalidOp(why) if why.contains("invalid type")), "{refused:?}");
    assert!(refused.to_string().starts_with("not a board op: "));
    assert_eq!(b.apply_json("x", NOW, &"x".repeat(limits::MAX_OP_JSON + 1)), Err(BoardError::TooLarge { field: "op".into(), limit: limits::MAX_OP_JSON }));
    assert_eq!(b.revision, 1, "only the valid op applied");

    let view = |name: &str, arg: &str| b.render(&View::named(name, arg).unwrap());
    assert_eq!(view("context-for-task", "T-1").unwrap(), serde_json::to_string(&b.context_for_task("T-1").unwrap()).unwrap());
    assert_eq!(view("ready", "").unwrap(), serde_json::to_string(&b.ready()).unwrap());
    assert_eq!(view("context_for_task", "T-9"), Err(BoardError::UnknownTask("T-9".into())));
    assert_eq!(View::named("everything", ""), None);
    assert_eq!(Board::load(&b.save()).unwrap(), b);
    assert!(Board::load("{}").unwrap_err().starts_with("not a serialized board"));
}

/// The total is checked where an op is written, not where the log is replayed: a board whose
/// log passed 8 MiB before the limit existed still rebuilds, and then takes no more text.
#[test]
fn a_log_past_the_total_still_replays() {
    let mut b = board();
    let description = "d".repeat(limits::MAX_TEXT);
    let n = limits::MAX_BYTES as usize / limits::MAX_TEXT + 10;
    for revision in 1..=n as u64 {
        let op = Op::AddTask { title: format!("task {revision}"), description: description.clone(), depends_on: vec![], needs_review: false };
        let event = workmem_guest::board::Event { revision, actor: "worker".into(), at: NOW.into(), op };
        b.replay(&event.to_json()).unwrap_or_else(|e| panic!("event {revision}: {e}"));
    }
    assert_eq!(b.tasks.len(), n);
    let more = Op::AddTask { title: "one more".into(), description: String::new(), depends_on: vec![], needs_review: false };
    assert!(matches!(b.apply("worker", NOW, &more), Err(BoardError::TooLarge { limit, .. }) if limit == limits::MAX_BYTES as usize));
    b.apply("worker", NOW, &Op::SetStatus { task: "T-1".into(), status: TaskStatus::InProgress }).expect("a status change adds no text");
}

/// The stranded and blocked views of a chain whose first task failed grow with the chain,
/// not with its cube (1,000 tasks took 1.5 s, 3,000 passed the engine's 10 s): timed at 500
/// and 4,000 tasks (`workmem_growth::time`; a quadratic walk takes 64x, a cubic one 512x).
#[test]
fn views_of_a_long_chain_are_linear() {
    let chain = |n: usize| {
        let mut b = board();
        let mut last = add(&mut b, "root", &[], false);
        set(&mut b, "dev", &last, TaskStatus::InProgress).unwrap();
        set(&mut b, "dev", &last, TaskStatus::Failed).unwrap();
        for i in 1..n {
            last = add(&mut b, &format!("step {i}"), &[&last], false);
        }
        b
    };
    let large = chain(4_000);
    assert_eq!(large.stranded().len(), 3_999);
    assert_eq!(large.stranded()[3_998].1, ["T-1"]);
    workmem_growth::time("stranded and blocked views", 500, chain, |b| {
        let stranded = b.render(&View::Stranded).unwrap();
        let blocked = b.render(&View::Blocked).unwrap();
        assert!(stranded.len() > b.tasks.len() && blocked.len() > b.tasks.len());
    });
}

/// The rules made since a log was written do not stop it replaying: an active board archived
/// and a decision approved twice, as boards from before them were, rebuild as they were.
#[test]
fn a_log_from_before_the_review_rules_still_replays() {
    let mut b = board();
    let decide = Op::Decide { question: "q".into(), choice: "c".into(), alternatives: vec![], rationale: "r".into(), affects_tasks: vec![], reversible: true };
    for (revision, op) in [decide, Op::Approve { decision: "D-1".into() }, Op::Approve { decision: "D-1".into() }, Op::Archive].into_iter().enumerate() {
        let event = workmem_guest::board::Event { revision: revision as u64 + 1, actor: "orchestrator".into(), at: NOW.into(), op };
        b.replay(&event.to_json()).unwrap_or_else(|e| panic!("event {}: {e}", revision + 1));
    }
    assert_eq!((b.status, b.approvals.len()), (BoardStatus::Archived, 2));
    let mut fresh = board();
    assert!(matches!(fresh.apply("orchestrator", NOW, &Op::Archive), Err(BoardError::NotClosed(BoardStatus::Active))));
}
