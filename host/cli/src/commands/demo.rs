//! `workmem demo`: a new session, three LLM-style responses (one of them malformed), and
//! what each does to the working memory.

use anyhow::Result;
use std::process::ExitCode;
use workmem_commit::{Error, json};
use workmem_runtime::{Diagnostic, Runtime};
use workmem_store::Sessions;

const RESPONSES: [(&str, &str); 3] = [
    ("01-start.dsl", include_str!("../../../../examples/responses/01-start.dsl")),
    ("02-malformed.dsl", include_str!("../../../../examples/responses/02-malformed.dsl")),
    ("03-progress.dsl", include_str!("../../../../examples/responses/03-progress.dsl")),
];

pub fn run(runtime: &Runtime, sessions: &Sessions, as_json: bool) -> Result<ExitCode> {
    let session = sessions.create(None, &runtime.instance()?.overview_template()?)?;
    if !as_json {
        println!("Created session {}\n", session.dir().display());
    }
    let mut steps = Vec::new();
    for (name, text) in RESPONSES {
        if !as_json {
            println!("━━ Applying the LLM response examples/responses/{name}");
        }
        let step = match workmem_commit::apply(runtime, &session, text) {
            Ok(applied) => {
                if !as_json {
                    print_diagnostics(name, &applied.warnings);
                    println!("{}", applied.diff);
                }
                json::applied(&applied)
            }
            Err(Error::InvalidDsl(ds)) => {
                if !as_json {
                    print_diagnostics(name, &ds);
                    println!("Rejected: the memory is unchanged (an agent would re-prompt with these diagnostics).\n");
                }
                json::rejected(&ds)
            }
            Err(e) => return Err(e.into()),
        };
        steps.push(serde_json::json!({"response": format!("examples/responses/{name}"), "result": step}));
    }
    if as_json {
        // The demo succeeded though one response was rejected: that is what it shows.
        crate::report::print_json(&serde_json::json!({
            "ok": true,
            "session": session.dir(),
            "steps": steps,
            "overview": session.overview()?,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    println!("━━ {}\n", session.overview_path().display());
    print!("{}", session.overview()?);
    println!("\nInspect it with: workmem show --session {0}   workmem log --session {0}", session.dir().display());
    Ok(ExitCode::SUCCESS)
}

/// On stdout, so the story reads in order.
fn print_diagnostics(name: &str, ds: &[Diagnostic]) {
    for d in ds {
        println!("{}", crate::report::diagnostic(name, d));
    }
}
