CURRENT_PROGRESS:
  Completed:
    - (none)
  In Progress:
    - Handling empty lists
  Remaining: (none)
KEY_LEARNINGS:
  ADD:
    (none)
  ARCHIVE: (none)
VERBATIM_CONTEXT:
  ADD:
    - None
  ARCHIVE:
    (None)
