//! `workmem history`: messages of a session by sequence number as they were logged, whatever
//! compacted them since, or the history the model now sees.

use crate::ctx::Ctx;
use crate::report;
use anyhow::Result;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    /// A sequence number (17) or a range (12-20)
    #[arg(long)]
    seq: Option<String>,
}

pub fn run(ctx: &Ctx, Args { session, seq }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    match seq {
        Some(spec) if json => {
            let found = workmem_agent::compact::originals(&s, &spec).map_err(anyhow::Error::msg)?;
            let v: Vec<_> = found.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Some(spec) => print!("{}", report::file_text(&workmem_agent::compact::read_history(&s, &spec).map_err(anyhow::Error::msg)?)),
        None => {
            let view = s.view()?.entries;
            if json {
                let v: Vec<_> = view.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if view.is_empty() {
                println!("no messages yet: `workmem agent` and `workmem proxy` log a session's messages");
            } else {
                for (seq, m) in &view {
                    let first = m.content.lines().next().unwrap_or_default();
                    println!("#{seq:<5} {:<9} {}", report::one_line(&m.role), report::one_line(&first.chars().take(100).collect::<String>()));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
