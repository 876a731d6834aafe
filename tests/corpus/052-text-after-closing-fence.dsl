```
KEY_LEARNINGS:
  ADD:
    - because it is fenced: fenced responses parse
```
Note: I archived nothing this time.
