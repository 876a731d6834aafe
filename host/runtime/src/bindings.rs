//! The agent world's bindings, the only ones: it includes the engine world, so the engine
//! component's exports are found through the same interfaces (see [`instance::EnginePre`])
//! and each WIT type exists once in Rust, whichever component a value crosses.

wasmtime::component::bindgen!({
    world: "agent",
    path: "wit",
    additional_derives: [PartialEq],
});
