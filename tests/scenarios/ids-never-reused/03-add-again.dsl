KEY_LEARNINGS:
  ADD:
    - because d: third, which must be KL-3
  ARCHIVE:
    - KL-1 because already archived
VERBATIM_CONTEXT:
  ADD:
    - because e: two => 2
