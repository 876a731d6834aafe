KEY_LEARNINGS:
  ARCHIVE:
    - KL-1 because plain form
    - [KL-2] because bracketed
    - KL-3: because colon after the ID
    - kl-4 because lower case
    - KL-007 because leading zeros
VERBATIM_CONTEXT:
  ARCHIVE:
    - VC-10 because done: with a colon in the reason
