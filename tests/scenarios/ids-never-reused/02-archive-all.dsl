KEY_LEARNINGS:
  ARCHIVE:
    - KL-1 because replaced
    - KL-2 because replaced
    - KL-2 because named twice
VERBATIM_CONTEXT:
  ARCHIVE:
    - VC-1 because replaced
