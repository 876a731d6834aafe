VERBATIM_CONTEXT:
  ADD:
    - because we will run it again: repro.py =>
      ```python
      from astropy import units as u
      print((10 * u.km / u.h).to(u.m / u.s))
      ```
KEY_LEARNINGS:
  ADD:
    - because the fence must not end the snippet early: fenced snippets are unwrapped
