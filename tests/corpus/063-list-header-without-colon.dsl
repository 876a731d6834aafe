CURRENT_PROGRESS:
  Completed
    - Reproduced the bug
  In Progress
    - Writing the fix
KEY_LEARNINGS:
  Add
    - because it explains the bug: the parser drops CRLF
