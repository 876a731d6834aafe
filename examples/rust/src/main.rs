use workmem_runtime::{Options, Runtime};

fn main() -> Result<(), workmem_runtime::Error> {
    let runtime = Runtime::new(&Options::default())?; // compiled once, cached on disk
    let mut engine = runtime.instance()?; // microseconds, from an InstancePre
    let state = engine.empty_state()?;
    let outcome = engine.apply(&state, "KEY_LEARNINGS:\n  ADD:\n    - because it matters: one engine, every runtime\n", &workmem_runtime::now())?;
    assert!(outcome.ok, "{:?}", outcome.diagnostics);
    print!("{}{}", outcome.merged.diff, engine.render(&outcome.merged.state)?);
    Ok(())
}
