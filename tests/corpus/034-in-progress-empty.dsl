CURRENT_PROGRESS:
  In Progress:
  Remaining:
    - Tests
