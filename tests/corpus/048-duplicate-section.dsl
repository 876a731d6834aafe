CURRENT_PROGRESS:
  In Progress:
    - First
KEY_LEARNINGS:
  ADD:
    - because a: one
CURRENT_PROGRESS:
  In Progress:
    - Second
