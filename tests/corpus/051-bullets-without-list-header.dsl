KEY_LEARNINGS:
  - because lists may be forgotten: a bullet with a reason reads as ADD
  - KL-2 because an ID reads as ARCHIVE
