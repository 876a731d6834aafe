//! `workmem replay`: trajectories under context policies, one table (issue 8's benchmark).

use crate::ReplayPolicy;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use workmem_agent::replay::{self, Policy, Run};
use workmem_runtime::Runtime;

pub fn policy(p: ReplayPolicy) -> Policy {
    match p {
        ReplayPolicy::Full => Policy::Full,
        ReplayPolicy::Fallback => Policy::Fallback,
        ReplayPolicy::Mask => Policy::Mask,
        ReplayPolicy::MaskBatched => Policy::MaskBatched,
        ReplayPolicy::Workmem | ReplayPolicy::All => Policy::Workmem,
    }
}

fn trajectories(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    anyhow::ensure!(!out.is_empty(), "no trajectory files (.jsonl) found");
    Ok(out)
}

/// A scratch directory for the sessions the workmem policies replay into, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(runtime: &Runtime, paths: &[PathBuf], policies: &[Policy], window: u32, png: Option<&Path>, as_json: bool) -> Result<()> {
    let files = trajectories(paths)?;
    let tokenizer = workmem_llm::Tokenizer::for_model("gpt-4o");
    let scratch = Scratch(std::env::temp_dir().join(format!("workmem-replay-{}", std::process::id())));
    // runs[policy][file]
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); policies.len()];
    for file in &files {
        let messages = replay::load(file)?;
        for (k, p) in policies.iter().enumerate() {
            let dir = scratch.0.join(format!("{}-{}", runs[k].len(), p.name()));
            std::fs::create_dir_all(&dir)?;
            let run = replay::replay(&messages, *p, window, runtime, &tokenizer, &dir).with_context(|| format!("replaying {}", file.display()))?;
            runs[k].push(run);
        }
    }
    if let Some(path) = png {
        crate::chart::tokens_per_turn(path, &files, policies, &runs, window)?;
    }
    if files.len() == 1 && policies.len() == 1 {
        let r = &runs[0][0];
        if as_json {
            println!("{}", serde_json::to_string_pretty(&one(&files[0], policies[0], window, r))?);
        } else {
            for (turn, tokens) in r.tokens.iter().enumerate() {
                println!("{:>4} {tokens:>7}", turn + 1);
            }
            eprintln!("{} requests, peak {}, total {}, cost with caching {:.0}, {} compactions", r.tokens.len(), peak(r), total(r), r.cost, r.compactions);
        }
        return Ok(());
    }
    let rows: Vec<serde_json::Value> = policies.iter().zip(&runs).map(|(p, rs)| summary(*p, rs, window)).collect();
    if as_json {
        let per_file: Vec<_> =
            files.iter().enumerate().flat_map(|(f, file)| policies.iter().zip(&runs).map(move |(p, rs)| one(file, *p, window, &rs[f]))).collect();
        println!("{}", serde_json::to_string_pretty(&json!({"window": window, "trajectories": files.len(), "policies": rows, "runs": per_file}))?);
    } else {
        print_table(&rows, files.len(), window);
    }
    Ok(())
}

fn peak(r: &Run) -> u32 {
    r.tokens.iter().copied().max().unwrap_or(0)
}

fn total(r: &Run) -> u64 {
    r.tokens.iter().map(|&t| u64::from(t)).sum()
}

fn one(file: &Path, p: Policy, window: u32, r: &Run) -> serde_json::Value {
    json!({
        "file": file.file_name().map(|n| n.to_string_lossy().into_owned()),
        "policy": p.name(),
        "window": window,
        "tokens": r.tokens,
        "peak": peak(r),
        "total": total(r),
        "cost": r.cost,
        "compactions": r.compactions,
        "compaction_ms": r.compaction_ms,
        "violations": r.violations,
        "compacted": r.compacted,
        "recovered": r.recovered,
    })
}

fn summary(p: Policy, runs: &[Run], window: u32) -> serde_json::Value {
    let threshold = window / 4 * 3;
    let mut ms: Vec<f64> = runs.iter().flat_map(|r| r.compaction_ms.iter().copied()).collect();
    ms.sort_by(f64::total_cmp);
    let requests: usize = runs.iter().map(|r| r.tokens.len()).sum();
    let tokens: u64 = runs.iter().map(total).sum();
    json!({
        "policy": p.name(),
        "peak": runs.iter().map(peak).max().unwrap_or(0),
        "over_threshold": runs.iter().filter(|r| peak(r) > threshold).count(),
        "mean": if requests == 0 { 0.0 } else { tokens as f64 / requests as f64 },
        "total": tokens,
        "cost": runs.iter().map(|r| r.cost).sum::<f64>(),
        "compactions": runs.iter().map(|r| r.compactions).sum::<u32>(),
        "compaction_ms_median": ms.get(ms.len() / 2).copied().unwrap_or(0.0),
        "compaction_ms_max": ms.last().copied().unwrap_or(0.0),
        "violations": runs.iter().map(|r| r.violations).sum::<u32>(),
        "compacted": runs.iter().map(|r| r.compacted).sum::<u32>(),
        "recovered": runs.iter().map(|r| r.recovered).sum::<u32>(),
    })
}

fn print_table(rows: &[serde_json::Value], files: usize, window: u32) {
    let full = rows.iter().find(|r| r["policy"] == "full");
    let base = |key: &str, r: &serde_json::Value| match full {
        Some(f) if f[key].as_f64().unwrap_or(0.0) > 0.0 => format!(" ({:.0}%)", r[key].as_f64().unwrap_or(0.0) * 100.0 / f[key].as_f64().unwrap_or(1.0)),
        _ => String::new(),
    };
    println!("{files} trajectories, {window}-token window, safety net at {}", window / 4 * 3);
    println!();
    println!(
        "| policy | peak | runs over 75% | mean | total tokens | cost with caching | compactions | compaction ms (median / max) | invariant violations | read back |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let compacted = r["compacted"].as_u64().unwrap_or(0);
        let read_back = if compacted == 0 { "-".to_string() } else { format!("{} / {compacted}", r["recovered"]) };
        println!(
            "| {} | {} | {} | {:.0} | {}{} | {:.0}{} | {} | {:.2} / {:.2} | {} | {} |",
            r["policy"].as_str().unwrap_or_default(),
            r["peak"],
            r["over_threshold"],
            r["mean"].as_f64().unwrap_or(0.0),
            r["total"],
            base("total", r),
            r["cost"].as_f64().unwrap_or(0.0),
            base("cost", r),
            r["compactions"],
            r["compaction_ms_median"].as_f64().unwrap_or(0.0),
            r["compaction_ms_max"].as_f64().unwrap_or(0.0),
            r["violations"],
            read_back
        );
    }
    let by = |name: &str| rows.iter().find(|r| r["policy"] == name);
    if let (Some(d), Some(c), Some(c2)) = (by("workmem"), by("mask"), by("mask-batched")) {
        let mark = |ok: bool| if ok { "✓" } else { "✗" };
        let f = |r: &serde_json::Value, key: &str| r[key].as_f64().unwrap_or(0.0);
        println!();
        println!("Targets (issue 8), workmem's policy against the baselines:");
        println!("- peak never above the safety net on any trajectory: {} runs over {}", d["over_threshold"], mark(d["over_threshold"] == 0));
        println!("- total tokens at or below masking's: {:.0} vs {:.0} {}", f(d, "total"), f(c, "total"), mark(f(d, "total") <= f(c, "total")));
        println!("- cost with caching at or below batched masking's: {:.0} vs {:.0} {}", f(d, "cost"), f(c2, "cost"), mark(f(d, "cost") <= f(c2, "cost")));
        println!("- invariant violations: {} {}", d["violations"], mark(d["violations"] == 0));
        println!("- compacted messages read back: {} of {} {}", d["recovered"], d["compacted"], mark(d["recovered"] == d["compacted"]));
    }
}
