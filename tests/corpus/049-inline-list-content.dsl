CURRENT_PROGRESS:
  In Progress: writing the parser
