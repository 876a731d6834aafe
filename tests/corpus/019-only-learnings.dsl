KEY_LEARNINGS:
  ADD:
    - because it changes the approach: the cache is keyed by path, not content
