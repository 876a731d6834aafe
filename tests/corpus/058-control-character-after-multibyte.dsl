KEY_LEARNINGS:
  ADD:
    - because ü matters: bell  here
