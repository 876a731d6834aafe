//! `workmem-replay`: recorded trajectories and generated histories replayed turn by turn
//! under context policies (see the library's documentation).

use clap::Parser;
use std::process::ExitCode;
use workmem_runtime::{Options, Runtime};

#[derive(Parser)]
#[command(
    name = "workmem-replay",
    version,
    about = "Replay recorded trajectories (JSONL, one message a line, as in tests/data/trajectories) and generated histories turn by turn under context policies: tokens, cost with caching, what each policy kept of the facts the agent needed, and the targets workmem is held to"
)]
struct Cli {
    /// Print JSON (errors included, as {"ok": false, "error": {...}})
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    replay: workmem_bench::command::ReplayArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let run = || -> anyhow::Result<ExitCode> {
        let runtime = Runtime::new(&Options::from_env().map_err(anyhow::Error::msg)?)?;
        workmem_bench::command::command(&runtime, cli.replay, cli.json)
    };
    match run() {
        Ok(code) => code,
        Err(e) => {
            // As the `workmem` CLI reports an error: a line on stderr, and under --json an
            // object a script reads.
            let message = format!("{e:#}");
            eprintln!("workmem-replay: error: {message}");
            if cli.json {
                println!("{}", serde_json::json!({"ok": false, "error": {"kind": "failed", "message": message}}));
            }
            ExitCode::from(1)
        }
    }
}
