KEY_LEARNINGS:
  ARCHIVE:
    - the old one about caching, because it is wrong
