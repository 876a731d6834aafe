VERBATIM_CONTEXT:
  ADD:
    - because make needs tabs: Makefile rule => test:
      	cargo test
      	go test ./...
