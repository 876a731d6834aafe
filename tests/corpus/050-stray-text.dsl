CURRENT_PROGRESS:
  In Progress:
    - Working
KEY_LEARNINGS:
I think we learned a lot today.
  ADD:
    - because a: one
