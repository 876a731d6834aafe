//! Load the engine component, apply one LLM answer to an empty memory, print the result.

use workmem::engine::{Options, Runtime};

fn main() -> Result<(), workmem::Error> {
    let runtime = Runtime::new(&Options::default())?; // compiled once, cached on disk
    let mut engine = runtime.instance()?; // microseconds, from an InstancePre

    let answer = "CURRENT_PROGRESS:\n  In Progress:\n    - Trying workmem from Rust\n\
                  KEY_LEARNINGS:\n  ADD:\n    - because it is short: embedding takes four calls\n";
    let state = engine.empty_state()?;
    let outcome = engine.apply(&state, answer, &workmem::now())?;
    if !outcome.ok {
        for d in outcome.diagnostics {
            eprintln!("{}:{}: {}: {}", d.line, d.column, d.severity, d.message);
        }
        std::process::exit(1);
    }
    print!("{}", outcome.merged.diff);
    print!("{}", engine.render(&outcome.merged.state)?);
    Ok(())
}
