VERBATIM_CONTEXT:
  ADD:
    - because we need it: test command =>
KEY_LEARNINGS:
  ADD:
    - because it follows: next section still parses
