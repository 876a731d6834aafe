CURRENT_PROGRESS:
  Completed:
    - Finished the parser
  Remaining:
    - Tests
