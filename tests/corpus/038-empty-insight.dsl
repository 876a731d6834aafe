KEY_LEARNINGS:
  ADD:
    - because it matters:
