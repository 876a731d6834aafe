Current Progress:
  in progress:
    - Accepting header case variations
  remaining:
    - Nothing
key_learnings:
  Add:
    - because models vary headers: header case is not significant
Verbatim Context:
  add:
    - because it is the config key: setting => DEBUG = False
