CURRENT_PROGRESS:
  Completed:
    - Read the failing test
  In Progress:
  Remaining:
    - Fix the parser
