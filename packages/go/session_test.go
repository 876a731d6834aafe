package workmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The shared session fixture (tests/data/session/README.md), as every runtime runs it.
var fixture = filepath.Join(tests, "data", "session")

const fixtureAt = "2026-11-23T12:00:00Z"

var fixtureFiles = []string{"state.json", "updates.jsonl", "working-memory/overview.md", "meta.json"}

// fixtureBytes is a fixture file, meta.json's updated_at (the committer's clock) aside.
func fixtureBytes(t *testing.T, dir, name string) string {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if name != "meta.json" {
		return string(data)
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), `"updated_at"`) {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

func copyFixture(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixture, "before"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func allFiles(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			out[p] = string(data)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkAfter(t *testing.T, dir, how string) {
	for _, name := range fixtureFiles {
		if got, want := fixtureBytes(t, dir, name), fixtureBytes(t, filepath.Join(fixture, "after"), name); got != want {
			t.Errorf("%s, %s:\n got: %q\nwant: %q", name, how, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "commit.pending.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: the pending commit is still there", how)
	}
}

func update(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join(fixture, "update.dsl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSessionFixtureCommitsByteForByte(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	dir := copyFixture(t)
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	applied, err := s.Apply(ctx, e, update(t), fixtureAt)
	if err != nil || applied.Seq != 2 {
		t.Fatalf("apply: %v, seq %d", err, applied.Seq)
	}
	checkAfter(t, dir, "committed")
}

func TestSessionPendingCommitIsFinishedOnLoad(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	dir := copyFixture(t)
	pending, _ := os.ReadFile(filepath.Join(fixture, "pending.json"))
	if err := os.WriteFile(filepath.Join(dir, "commit.pending.json"), pending, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.LoadMemory(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if snap, _ := m.Snapshot(ctx); snap.Updates != 2 {
		t.Errorf("the loaded memory has %d updates, not 2", snap.Updates)
	}
	checkAfter(t, dir, "from the pending commit")
}

// Node's writer holds a session through .lock.holder alone (host/store/src/holder.rs): Go
// waits for a live holder after its flock, and breaks a dead or long-empty one.
func TestSessionHolderFileOfALiveProcessHoldsACommit(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	dir := copyFixture(t)
	holder := filepath.Join(dir, ".lock.holder")
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(holder, []byte(fmt.Sprintf("%d 0123\n", other.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.Apply(ctx, e, update(t), fixtureAt)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the commit did not wait for the live holder: %v", err)
	case <-time.After(150 * time.Millisecond):
	}
	_ = other.Process.Kill()
	_ = other.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkAfter(t, dir, "once the holder was gone")
	if err := os.WriteFile(holder, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * time.Second)
	if err := os.Chtimes(holder, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - because a crash left it: an empty holder file\n", fixtureAt); err != nil {
		t.Fatal(err)
	}
	// One written under the flock, which this writer now holds, is a crash's, whatever process
	// took its number since (this one's, here).
	if err := os.WriteFile(holder, []byte(fmt.Sprintf("%d 0123 flock\n", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - because a CLI was killed: a holder file under the flock\n", fixtureAt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(holder); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the holder file outlived the lock: %v", err)
	}
}

// A holder naming a live process that started at another time (its number reused) is a crash's;
// a symlink, FIFO or folder in the holder file's place is refused at once, where Go once waited
// on it without bound.
func TestSessionHolderByAReusedNumberIsBrokenAndNoHolderIsRefused(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	dir := copyFixture(t)
	holder := filepath.Join(dir, ".lock.holder")
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, ok := started(os.Getpid())
	if !ok {
		t.Fatal("Linux tells when a process started")
	}
	if err := os.WriteFile(holder, []byte(fmt.Sprintf("%d 0123@%s1\n", os.Getpid(), start)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, e, update(t), fixtureAt); err != nil {
		t.Fatalf("a holder by a reused number held the lock: %v", err)
	}
	for what, plant := range map[string]func() error{
		"symlink": func() error { return os.Symlink("/etc/hostname", holder) },
		"fifo":    func() error { return syscall.Mkfifo(holder, 0o600) },
		"folder":  func() error { return os.Mkdir(holder, 0o700) },
	} {
		if err := plant(); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		_, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - because it is refused: never\n", fixtureAt)
		if err == nil || !strings.Contains(err.Error(), "no workmem writer made it; remove it") || time.Since(began) > 5*time.Second {
			t.Fatalf("%s: %v after %v", what, err, time.Since(began))
		}
		if err := os.Remove(holder); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSessionRefusalsChangeNothing(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	if _, err := OpenSession(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a session") {
		t.Errorf("a folder without meta.json: %v", err)
	}
	dir := copyFixture(t)
	s, err := OpenSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// A stale commit: another writer committed after this memory was loaded.
	first, _ := s.LoadMemory(ctx, e)
	second, _ := s.LoadMemory(ctx, e)
	applied, err := first.Apply(ctx, update(t), fixtureAt, Wants{Overview: true, State: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(applied); err != nil {
		t.Fatal(err)
	}
	before := allFiles(t, dir)
	stale, _ := second.Apply(ctx, "KEY_LEARNINGS:\n  ADD:\n    - because it races: a second writer\n", fixtureAt, Wants{Overview: true, State: true})
	var se *SessionError
	if err := s.Commit(stale); !errors.As(err, &se) || !strings.Contains(err.Error(), "another writer committed") {
		t.Errorf("a stale commit: %v", err)
	}
	// Apply commits: committing what it returned again says so, and changes nothing.
	done, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - because it is one step: apply commits\n", fixtureAt)
	if err != nil {
		t.Fatal(err)
	}
	before = allFiles(t, dir)
	if err := s.Commit(done); !errors.As(err, &se) || !strings.Contains(err.Error(), "update 3 is already committed: Apply commits what it applies") {
		t.Errorf("a commit after Apply: %v", err)
	}
	if !reflect.DeepEqual(before, allFiles(t, dir)) {
		t.Error("a refused commit changed the session")
	}
	// Invalid DSL.
	var invalid *InvalidError
	if _, err := s.Apply(ctx, e, "KEY_LEARNINGS:\n  ADD:\n    - no reason\n", fixtureAt); !errors.As(err, &invalid) {
		t.Errorf("invalid DSL: %v", err)
	}
	// working-memory/ swapped for a symlink to outside.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "overview.md"), []byte("secret\n"), 0o644)
	os.RemoveAll(filepath.Join(dir, "working-memory"))
	if err := os.Symlink(outside, filepath.Join(dir, "working-memory")); err != nil {
		t.Fatal(err)
	}
	delete(before, filepath.Join(dir, "working-memory", "overview.md"))
	if text, err := s.Overview(); err == nil {
		t.Errorf("read through a symlink to outside: %q", text)
	}
	if _, err := s.Apply(ctx, e, update(t), fixtureAt); !errors.As(err, &se) {
		t.Errorf("apply through a symlink to outside: %v", err)
	}
	if after := allFiles(t, dir); !reflect.DeepEqual(after, before) {
		t.Error("a refused commit changed the session")
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "overview.md")); string(data) != "secret\n" {
		t.Error("a file outside the session was written")
	}
}

func TestAssembleAndContextMeta(t *testing.T) {
	ctx, e := context.Background(), newEngine(t)
	history := []ChatMessage{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}}
	messages, err := e.Assemble(ctx, ContextRequest{SystemPrompt: "You help.", Overview: "# Overview\nFixing units.py\n", History: history,
		ActiveTurn: 2, HistoryMode: HistoryLastN, LastN: 1, AgentsMd: "be brief"})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"system", "system", "system", "user"}) || messages[3].Content != "c" {
		t.Errorf("roles %v, last %q", roles, messages[len(messages)-1].Content)
	}
	if !strings.Contains(messages[2].Content, `<working_memory path="working-memory/overview.md">`) {
		t.Errorf("the default overview path is not named: %q", messages[2].Content)
	}
	quiet, _ := e.ContextMeta(ctx, ContextStats{TokensUsed: 100, TokensMax: 1000, CompactAt: 750})
	if quiet != "<context_meta>\n{\"tokens_used\":100,\"tokens_percent\":10}\n</context_meta>" {
		t.Errorf("quiet context_meta: %s", quiet)
	}
	meta, _ := e.ContextMeta(ctx, ContextStats{TokensUsed: 100, TokensMax: 1000, CompactAt: 750, CompactionNotice: "History was compacted."})
	if !strings.Contains(meta, "\"auto_compact_at\":750}\nHistory was compacted.") {
		t.Errorf("context_meta: %s", meta)
	}
	template, _ := e.OverviewTemplate(ctx)
	if maintained, _ := e.OverviewMaintained(ctx, template); maintained {
		t.Error("the template counts as maintained")
	}
	if maintained, _ := e.OverviewMaintained(ctx, "# Overview\n\nWe found the bug in units.py.\n"); !maintained {
		t.Error("real content does not count as maintained")
	}
}
