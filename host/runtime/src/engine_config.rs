//! The wasmtime settings that shape compiled code. The build script compiles the components
//! this crate carries under them (it includes this file), and the runtime loads those
//! artifacts under them: wasmtime refuses an artifact compiled under other settings, so both
//! read them from here.

/// Sets what every engine of this crate, and every artifact it loads, agrees on.
pub fn configure(config: &mut wasmtime::Config) -> &mut wasmtime::Config {
    config.wasm_component_model(true);
    // The CPU deadline is checked on epoch ticks (`sandbox`).
    config.epoch_interruption(true);
    // A trap is reported by its cause, not by its wasm offset, which needs the address map:
    // a sixth of the compiled engine (2,593,232 bytes to 2,285,952), and the guest keeps no
    // function names to go with it anyway.
    config.generate_address_map(false);
    config
}
