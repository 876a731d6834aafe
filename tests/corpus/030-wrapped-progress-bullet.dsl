CURRENT_PROGRESS:
  In Progress:
    - Investigating why the migration autodetector
      serializes Enum defaults by value
  Remaining:
    - Fix it
