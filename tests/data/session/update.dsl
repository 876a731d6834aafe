CURRENT_PROGRESS:
  Completed:
    - Read the issue: Quantity.to() returns wrong values for composite units
    - Reproduced the failure with repro.py
  In Progress:
    - Fixing the scale factor in CompositeUnit._to
  Remaining:
    - Write a regression test

KEY_LEARNINGS:
  ADD:
    - because it is the root cause: CompositeUnit._to applies the scale twice
  ARCHIVE:
    - KL-2 because the example in the repro now covers it
    - KL-9 because it is stale

VERBATIM_CONTEXT:
  ADD:
    - because the fix must keep this signature: astropy/units/core.py => def _to(self, other):
          if self is other:
              return 1.0
  ARCHIVE:
    - VC-1 because repro.py is now a test
