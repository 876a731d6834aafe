CURRENT_PROGRESS:
  In Progress:
    - Handling CRLF input
KEY_LEARNINGS:
  ADD:
    - because Windows tools emit them: some responses arrive with CRLF line endings
