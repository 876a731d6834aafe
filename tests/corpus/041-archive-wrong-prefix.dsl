KEY_LEARNINGS:
  ARCHIVE:
    - VC-2 because it is outdated
VERBATIM_CONTEXT:
  ARCHIVE:
    - KL-1 because it is outdated
