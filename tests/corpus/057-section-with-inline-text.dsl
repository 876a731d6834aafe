KEY_LEARNINGS: nothing new
CURRENT_PROGRESS:
  In Progress:
    - Working
