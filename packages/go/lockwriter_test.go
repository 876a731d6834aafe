package workmem

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestLockWriter is a writer the four-runtime lock suite (tests/lock/run.py) runs as a process
// of its own, as Go's standard library runs its helper processes: with WORKMEM_LOCK_SESSION set
// it applies WORKMEM_LOCK_UPDATES updates to that session, printing each one's tag as it is
// acknowledged; without, it does nothing.
func TestLockWriter(t *testing.T) {
	dir := os.Getenv("WORKMEM_LOCK_SESSION")
	if dir == "" {
		t.Skip("run by tests/lock/run.py")
	}
	n, err := strconv.Atoi(os.Getenv("WORKMEM_LOCK_UPDATES"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		tag := fmt.Sprintf("go-%d-%d", os.Getpid(), i)
		if _, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - because it races: "+tag+"\n", Now()); err != nil {
			t.Fatal(err)
		}
		fmt.Println(tag)
	}
}
