KEY_LEARNINGS:
  ADD:
    - Because the docs say so: the timeout is 30s: not configurable per request
    - because   spaces vary   : insight with a URL https://example.com/a:b
VERBATIM_CONTEXT:
  ADD:
    - because the label has a colon too: key: value => a => b
