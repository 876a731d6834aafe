//! `workmem demo`: a new session, three LLM-style responses (one of them malformed), and
//! what each does to the working memory.

use anyhow::Result;
use std::process::ExitCode;
use workmem_memory::Error;
use workmem_runtime::{Diagnostic, Runtime};
use workmem_store::Sessions;

const RESPONSES: [(&str, &str); 3] = [
    ("01-start.dsl", include_str!("../../../examples/responses/01-start.dsl")),
    ("02-malformed.dsl", include_str!("../../../examples/responses/02-malformed.dsl")),
    ("03-progress.dsl", include_str!("../../../examples/responses/03-progress.dsl")),
];

pub fn run(runtime: &Runtime, sessions: &Sessions) -> Result<ExitCode> {
    let session = sessions.create(None, &runtime.instance()?.overview_template()?)?;
    println!("Created session {}\n", session.dir().display());
    for (name, text) in RESPONSES {
        println!("━━ Applying the LLM response examples/responses/{name}");
        match workmem_memory::apply(runtime, &session, text) {
            Ok(applied) => {
                print_diagnostics(name, &applied.warnings);
                println!("{}", applied.diff);
            }
            Err(Error::InvalidDsl(ds)) => {
                print_diagnostics(name, &ds);
                println!("Rejected: the memory is unchanged (an agent would re-prompt with these diagnostics).\n");
            }
            Err(e) => return Err(e.into()),
        }
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
