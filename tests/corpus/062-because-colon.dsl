KEY_LEARNINGS:
  ADD:
    - because: it decides the cache key: the key includes the locale
  ARCHIVE:
    - KL-1 because: superseded by the locale rule
