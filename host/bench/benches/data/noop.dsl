KEY_LEARNINGS:
  ARCHIVE:
    - KL-999 because it does not exist
