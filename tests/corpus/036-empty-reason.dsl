KEY_LEARNINGS:
  ADD:
    - because : the cache is keyed by path
VERBATIM_CONTEXT:
  ARCHIVE:
    - VC-1 because
