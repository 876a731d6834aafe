CURRENT_PROGRESS:
  In Progress:
    - This part is fine
KEY_LEARNINGS:
  ADD:
    - because fine: this one is fine
    - this one is not
VERBATIM_CONTEXT:
  ADD:
    - because fine: label without arrow
