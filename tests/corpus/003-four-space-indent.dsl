CURRENT_PROGRESS:
    In Progress:
        - Reading django/db/models/query.py
    Remaining:
        - Patch QuerySet.union

KEY_LEARNINGS:
    ADD:
        - because union drops ordering otherwise: QuerySet.union clears ordering on subqueries
