CURRENT_PROGRESS:
  In Progress:
    -
    - Real item
