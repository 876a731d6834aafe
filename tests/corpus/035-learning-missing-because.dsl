KEY_LEARNINGS:
  ADD:
    - the cache is keyed by path
