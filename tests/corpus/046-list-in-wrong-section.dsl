CURRENT_PROGRESS:
  ADD:
    - because no: this is not a progress list
  In Progress:
    - Working
KEY_LEARNINGS:
  Completed:
    - not a learning list
