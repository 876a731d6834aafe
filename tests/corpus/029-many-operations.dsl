CURRENT_PROGRESS:
  Completed:
    - Step one
    - Step two
  In Progress:
    - Step three
    - Step four (in parallel)
  Remaining:
    - Step five
KEY_LEARNINGS:
  ADD:
    - because one: first insight
    - because two: second insight
    - because three: third insight
  ARCHIVE:
    - KL-1 because superseded by the first insight
    - KL-2 because superseded by the second insight
VERBATIM_CONTEXT:
  ADD:
    - because a: first => one
    - because b: second => two
  ARCHIVE:
    - VC-3 because gone
