use workmem_runtime::{Options, Runtime, Wants};

fn main() -> Result<(), workmem_runtime::Error> {
    let runtime = Runtime::new(&Options::default())?; // compiled when the crate was built
    let mut memory = runtime.new_memory()?; // lives in its own instance (microseconds)
    let update = "KEY_LEARNINGS:\n  ADD:\n    - because it matters: one engine, every runtime\n";
    match memory.apply(update, &workmem_runtime::now(), Wants { overview: true, state: false })? {
        Ok(applied) => print!("{}{}", applied.diff, applied.overview.unwrap_or_default()),
        Err(diagnostics) => eprintln!("{diagnostics:?}"), // line, column and message of each problem
    }
    let state_json = memory.save()?; // state.json: the same bytes from every runtime
    assert!(runtime.load_memory(&state_json)?.is_ok());
    Ok(())
}
