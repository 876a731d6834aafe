CURRENT_PROGRESS:
  - Working on the parser
  In Progress:
    - Working on the parser
