CURRENT_PROGRESS:
  Completed:
    - Reproduced the bug
    - Found the failing test
  In Progress:
    - Fixing Quantity.to()
  Remaining:
    - Run the full suite

KEY_LEARNINGS:
  ADD:
    - because it explains the failure: the scale factor is applied twice
  ARCHIVE:
    - KL-2 because the hypothesis was disproved

VERBATIM_CONTEXT:
  ADD:
    - because we must call it exactly: test command => pytest astropy/units -k composite
  ARCHIVE:
    - VC-1 because the config was replaced
