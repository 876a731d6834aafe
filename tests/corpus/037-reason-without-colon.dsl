KEY_LEARNINGS:
  ADD:
    - because the cache is keyed by path
