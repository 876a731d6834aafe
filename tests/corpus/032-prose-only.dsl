I could not find anything to update this time.
The task is still in progress.
