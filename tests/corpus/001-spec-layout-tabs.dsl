CURRENT_PROGRESS:
	Completed:
		- Set up the workspace
	In Progress:
		- Writing the parser
	Remaining:
		- Benchmarks

KEY_LEARNINGS:
	ADD:
		- because it saves a rebuild: cargo check is enough for type errors
	ARCHIVE:
		- KL-1 because it was wrong

VERBATIM_CONTEXT:
	ADD:
		- because the next step runs it: build command => cargo build --release
	ARCHIVE:
		- VC-2 because the file moved
