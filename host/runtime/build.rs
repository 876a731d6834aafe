//! Builds the engine's components as part of the host's normal build, so nobody has to know
//! the wasm steps: the guest crate for wasm32-unknown-unknown (no WASI), once per world, then
//! a component made from each core module and the WIT that wit-bindgen embedded in it, then
//! the worlds the runtime runs compiled to native code for the target (`src/precompiled.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/engine_config.rs"]
mod engine_config;

const TARGET: &str = "wasm32-unknown-unknown";
/// Set (to anything), the guest keeps its functions' names, so that wasmtime's perf map
/// (`WORKMEM_PERFMAP=1`) names them: for profiling (`make bench-functions`), never a release.
const NAMES: &str = "WORKMEM_GUEST_NAMES";

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.ancestors().nth(2).expect("host/runtime sits two levels below the workspace root").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    // Only the worlds this build's features embed: an embedder builds the engine alone.
    let worlds = [
        ("workmem-engine.wasm", true),
        ("workmem-agent.wasm", std::env::var_os("CARGO_FEATURE_AGENT").is_some()),
        ("workmem-engine-go-core.wasm", std::env::var_os("CARGO_FEATURE_GO_CORE").is_some()),
    ];
    // A packaged crate (`make dist`) has no guest sources beside it, but the components built
    // from them, path-independent, in `components/`.
    if !root.join("guest/Cargo.toml").exists() {
        for (name, _) in worlds.iter().filter(|w| w.1) {
            let prebuilt = manifest.join("components").join(name);
            println!("cargo:rerun-if-changed={}", prebuilt.display());
            let bytes = std::fs::read(&prebuilt)
                .unwrap_or_else(|e| panic!("{}: {e} (neither the guest sources nor the prebuilt components are here)", prebuilt.display()));
            carry(&out, name, &bytes);
        }
        return;
    }
    for watched in ["guest/src", "guest/Cargo.toml", "wit", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed={NAMES}");
    // <target>/<profile>/build/<pkg>/out: guest target dirs beside the outer one, shared by
    // every host profile, and apart from it so the nested cargo does not wait on its lock.
    let targets = out.ancestors().nth(4).unwrap_or(&out).to_path_buf();

    ensure_wasm_target();
    // The engine world (no imports), the agent world (the engine plus granted capabilities)
    // and the engine-go world (the engine, flat, for Gravity): one crate, three builds, each
    // in its own target dir so none invalidates another.
    let core = build_guest(&root, &targets.join("engine-guest"), &[]);
    carry(&out, worlds[0].0, &componentize(&core));
    if worlds[1].1 {
        let agent = build_guest(&root, &targets.join("agent-guest"), &["--features", "agent"]);
        carry(&out, worlds[1].0, &componentize(&agent));
    }
    if worlds[2].1 {
        // Gravity (Go) reads a core module with its embedded WIT.
        let go = build_guest(&root, &targets.join("go-guest"), &["--features", "go"]);
        carry(&out, worlds[2].0, &go);
    }
}

/// What the crate embeds of a world: its bytes as built, deflated (`Embedded`), and for the
/// components wasmtime runs here (the engine and agent worlds, not the Go core module), the
/// compiled artifact, in LZ4 (`Precompiled`): read at every start, where DEFLATE's smaller
/// size is not worth its slower inflating.
fn carry(out: &Path, name: &str, bytes: &[u8]) {
    embed(&out.join(name), bytes);
    if name.ends_with("-go-core.wasm") {
        return;
    }
    let artifact = out.join(name).with_extension("cwasm.lz4");
    std::fs::write(&artifact, lz4_flex::block::compress_prepend_size(&precompile(bytes))).unwrap_or_else(|e| panic!("writing {}: {e}", artifact.display()));
}

/// Compiles a component for the target this crate is built for, with the runtime's engine
/// settings. For a fixed level of CPU, not this machine's: what is built does not depend on
/// which machine built it, and runs on any CPU of that level.
fn precompile(component: &[u8]) -> Vec<u8> {
    let target = std::env::var("TARGET").expect("set by cargo");
    let mut config = wasmtime::Config::new();
    engine_config::configure(&mut config).target(&target).unwrap_or_else(|e| panic!("wasmtime cannot compile for {target}: {e:#}"));
    if target.starts_with("x86_64") {
        // x86-64-v2 (to SSE4.2 and POPCNT: every x86-64 CPU since 2009, and what RHEL 9
        // requires). The guest's SIMD loops need SSE4.1 to compile to the instructions they
        // name: for the plain x86-64 baseline an apply took 10% more instructions (265,332 to
        // 246,665; this machine's every feature, AVX-512 included, 241,492).
        // SAFETY: wasmtime records the features the code uses in the artifact, and refuses
        // to load it, with an error, on a CPU that lacks one (`Precompiled::load`).
        #[allow(unsafe_code)]
        unsafe {
            config.cranelift_flag_enable("x86-64-v2");
        }
    }
    let engine = wasmtime::Engine::new(&config).unwrap_or_else(|e| panic!("a wasmtime engine for {target}: {e:#}"));
    engine.precompile_component(component).unwrap_or_else(|e| panic!("compiling the component for {target}: {e:#}"))
}

fn build_guest(root: &Path, target_dir: &Path, extra: &[&str]) -> Vec<u8> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--package", "workmem-guest", "--target", TARGET, "--profile", "guest"])
        .args(extra)
        .env("CARGO_TARGET_DIR", target_dir)
        // The outer build's flags are for the host target, not for wasm.
        .env("CARGO_ENCODED_RUSTFLAGS", guest_rustflags(root))
        .env("CARGO_PROFILE_GUEST_STRIP", if std::env::var_os(NAMES).is_some() { "false" } else { "true" })
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        // Nor is a lint wrapper (the Makefile's linted build): clippy-driver turns MIR
        // optimizations off, and the components it built were 0.5% larger. What a component
        // is does not depend on who built the host; the Makefile lints the guest for wasm.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .status()
        .expect("running cargo to build the engine guest");
    assert!(status.success(), "building the engine guest for {TARGET} failed (see the output above)");
    let path = target_dir.join(TARGET).join("guest").join("workmem_guest.wasm");
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The paths a panic message would carry are made the same on every machine, so a clone
/// anywhere builds the same bytes (the Go module commits the core module and CI checks it
/// matches). `simd128`, which every runtime here runs (wasmtime, V8, wazero), lets LLVM
/// vectorize byte loops: 4% fewer instructions per apply and a 5 KB smaller module, and
/// fewer loop turns, each of which pays wasmtime's epoch check in a component.
fn guest_rustflags(root: &Path) -> String {
    let cargo_home =
        std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo"))).unwrap_or_default();
    let remap = |from: &Path, to: &str| format!("--remap-path-prefix={}={to}", from.display());
    [remap(&cargo_home, "/cargo"), remap(root, "/workmem"), "-Ctarget-feature=+simd128".into()].join("\x1f")
}

/// A component from a core module and the WIT that wit-bindgen embedded in it.
fn componentize(core: &[u8]) -> Vec<u8> {
    wit_component::ComponentEncoder::default()
        .module(core)
        .and_then(|enc| enc.validate(true).encode())
        .unwrap_or_else(|e| panic!("turning the guest into a component: {e:#}"))
}

/// Writes `<path>.deflate`, what the crate embeds (`Embedded`): DEFLATE at its highest level
/// makes a component a third of its size in the binary.
fn embed(path: &Path, bytes: &[u8]) {
    let deflated = miniz_oxide::deflate::compress_to_vec(bytes, 10);
    let mut name = path.as_os_str().to_owned();
    name.push(".deflate");
    std::fs::write(&name, deflated).unwrap_or_else(|e| panic!("writing {}: {e}", Path::new(&name).display()));
}

/// Installs the wasm target through rustup when the toolchain lacks it.
fn ensure_wasm_target() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let libdir = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if libdir.is_some_and(|d| has_core(&d)) {
        return;
    }
    println!("cargo:warning=installing the {TARGET} target with rustup");
    let ok = Command::new("rustup").args(["target", "add", TARGET]).status().is_ok_and(|s| s.success());
    assert!(ok, "the {TARGET} Rust target is missing and `rustup target add {TARGET}` failed; install it and build again");
}

fn has_core(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("libcore-")))
}
