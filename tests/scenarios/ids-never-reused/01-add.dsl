CURRENT_PROGRESS:
  In Progress:
    - Collecting facts
KEY_LEARNINGS:
  ADD:
    - because a: first
    - because b: second
VERBATIM_CONTEXT:
  ADD:
    - because c: one => 1
