CURRENT_PROGRESS:
  Completed:
    * Listed the failing tests
  In Progress:
    * Bisecting the regression
KEY_LEARNINGS:
  ADD:
    * because it narrows the search: the regression appeared between 4.1 and 4.2
