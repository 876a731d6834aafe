```
CURRENT_PROGRESS:
  In Progress:
    - Parsing a fenced response
KEY_LEARNINGS:
  ADD:
    - because models love markdown: responses are often wrapped in a code fence
```
