CURRENT_PROGRESS:
  In Progress:
    - Reading astropy/units/quantity.py

KEY_LEARNINGS:
  ADD:
    - Quantity.to delegates to Unit.to
    - because : the scale is applied twice
  ARCHIVE:
    - KL-1 because
