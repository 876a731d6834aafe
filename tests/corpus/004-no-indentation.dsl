CURRENT_PROGRESS:
Completed:
- Located the migration autodetector
In Progress:
- Writing the regression test
KEY_LEARNINGS:
ADD:
- because it decides the fix location: Enum defaults are serialized by value, not by name
ARCHIVE:
(none)
VERBATIM_CONTEXT:
ADD:
- because the test must import it: module path => django.db.migrations.serializer
