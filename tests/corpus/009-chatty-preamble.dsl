Sure! Here is the updated working memory based on the latest progress:

CURRENT_PROGRESS:
  In Progress:
    - Ignoring chatty preambles
