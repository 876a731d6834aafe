CURRENT_PROGRESS:
  In Progress:
    1. Reading the trace
    2. Writing the fix
  Remaining:
    + Open the pull request
