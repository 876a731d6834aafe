I've updated the memory as requested.

```dsl
CURRENT_PROGRESS:
  Completed:
    - Wrote the parser
  In Progress:
    - Testing deviations
```

Hope this helps!
