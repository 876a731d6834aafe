KEY_LEARNINGS:
  ADD:
    - because it matters: the cache is keyed by path
      and also by the mtime of the file
