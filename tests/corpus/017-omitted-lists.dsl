CURRENT_PROGRESS:
  In Progress:
    - Cleaning up
KEY_LEARNINGS:
  ARCHIVE:
    - KL-4 because it no longer applies
VERBATIM_CONTEXT:
