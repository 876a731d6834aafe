CURRENT_PROGRESS:   
  In Progress:  
    - Trimming trailing spaces	 
  Remaining:
    - Nothing else   
