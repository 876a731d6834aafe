## CURRENT_PROGRESS
**In Progress:**
- Accepting markdown headers
**Completed:**
- Nothing yet, but the list is here

## KEY_LEARNINGS
### ADD
- because models write markdown: headers may carry # and ** decorations
