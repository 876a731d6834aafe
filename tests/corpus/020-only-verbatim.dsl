VERBATIM_CONTEXT:
  ADD:
    - because the fix depends on it: error message => TypeError: unsupported operand type(s) for +: 'int' and 'str'
