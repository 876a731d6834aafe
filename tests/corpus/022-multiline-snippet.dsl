VERBATIM_CONTEXT:
  ADD:
    - because the fix must keep this shape: astropy/units/core.py => def _to(self, other):
          if self is other:
              return 1.0

          raise UnitConversionError(other)
    - because it is the next call site: caller => q.to(u.m / u.s)
