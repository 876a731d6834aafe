VERBATIM_CONTEXT:
  ADD:
    - because CI reads it: .github/workflows/ci.yml => steps:
        - uses: actions/checkout@v4
        - run: cargo test
    - because it is short: version => 1.95
