```
CURRENT_PROGRESS:
  In Progress:
    - The model stopped before closing the fence
