VERBATIM_CONTEXT:
  ADD:
    - because we need it: cargo test --workspace
