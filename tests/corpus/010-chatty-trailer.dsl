CURRENT_PROGRESS:
  In Progress:
    - Ignoring chatty trailers
KEY_LEARNINGS:
  ADD:
    - because models add pleasantries: text after the DSL must not become an insight

Let me know if you want me to adjust anything.
