Here is the updated working memory:

```
CURRENT_PROGRESS:
  Completed:
    - Read the issue: Quantity.to() returns wrong values for composite units
  In Progress:
    - Reproducing the failure with a minimal script
  Remaining:
    - Locate the conversion code in astropy/units
    - Write a regression test

KEY_LEARNINGS:
  ADD:
    - because it decides which tests to run: the units tests live in astropy/units/tests/
    - because the reporter's example hides it: the bug only shows with composite units like km/h

VERBATIM_CONTEXT:
  ADD:
    - because we need the exact failing call: repro.py => from astropy import units as u
      q = 10 * u.km / u.h
      print(q.to(u.m / u.s))  # expected 2.7777 m / s
  ARCHIVE:
    (none)
```
