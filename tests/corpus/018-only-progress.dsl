CURRENT_PROGRESS:
  Completed:
    - Everything up to the tests
  In Progress:
    - Running the tests
