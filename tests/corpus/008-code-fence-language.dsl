```text
CURRENT_PROGRESS:
  In Progress:
    - Parsing a fenced response with an info string
VERBATIM_CONTEXT:
  ADD:
    - because it is the entry point: main file => src/main.rs
```
