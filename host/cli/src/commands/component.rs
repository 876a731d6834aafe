//! `workmem component`: the components the binary carries, written out for other runtimes.

use crate::report;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ComponentArgs {
    /// The file to write
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The engine-go world's core module (what Gravity reads), not a component
    #[arg(long, conflicts_with = "agent")]
    go: bool,
    /// The agent world's component: the engine plus the llm, session-store and clock imports
    #[arg(long)]
    agent: bool,
}

pub fn run(args: ComponentArgs, json: bool) -> Result<ExitCode> {
    let ComponentArgs { out, go, agent } = args;
    let bytes = match (go, agent) {
        (true, _) => &workmem_runtime::GO_CORE_MODULE,
        (_, true) => &workmem_runtime::AGENT_COMPONENT,
        _ => &workmem_runtime::COMPONENT,
    }
    .bytes();
    workmem_store::fsio::write_atomic(&out, bytes).with_context(|| format!("writing {}", out.display()))?;
    if json {
        report::print_json(&serde_json::json!({"ok": true, "out": out, "bytes": bytes.len()}));
    }
    Ok(ExitCode::SUCCESS)
}
