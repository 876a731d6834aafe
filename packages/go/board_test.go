package workmem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBoardConformance runs tests/data/board/ (spec 002's example as data) and must produce
// the events, state and views every other runtime produces, and the same refusals.
func TestBoardConformance(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	dir := filepath.Join(tests, "data", "board")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var created struct {
		ID, Name, Goal, Now string
		Constraints         []string
		MemoryCoreRefs      []string `json:"memory_core_refs"`
	}
	if err := json.Unmarshal(read("board.json"), &created); err != nil {
		t.Fatal(err)
	}
	b, err := e.NewBoard(ctx, created.ID, created.Name, created.Goal, created.Constraints, created.MemoryCoreRefs, created.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var events strings.Builder
	for n, line := range strings.Split(strings.TrimSpace(string(read("ops.jsonl"))), "\n") {
		var step struct {
			Actor, At, Refused, Rule string
			Op                       json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &step); err != nil {
			t.Fatal(err)
		}
		var op bytes.Buffer
		if err := json.Compact(&op, step.Op); err != nil {
			t.Fatal(err)
		}
		before, _ := b.Save(ctx)
		applied, err := b.ApplyJSON(ctx, step.Actor, step.At, op.String())
		var refused *BoardError
		switch {
		case step.Refused == "" && err == nil:
			events.WriteString(applied.Event + "\n")
		case step.Refused != "" && errors.As(err, &refused):
			if refused.Message != step.Refused || refused.Rule != step.Rule {
				t.Errorf("ops.jsonl line %d: refused with %q (%s), want %q (%s)", n+1, refused.Message, refused.Rule, step.Refused, step.Rule)
			}
			if after, _ := b.Save(ctx); after != before {
				t.Errorf("ops.jsonl line %d: a refused op changed the board", n+1)
			}
		default:
			t.Fatalf("ops.jsonl line %d: %v, want refusal %q", n+1, err, step.Refused)
		}
	}
	if events.String() != string(read("events.jsonl")) {
		t.Errorf("events differ from events.jsonl:\n%s", events.String())
	}
	if state, _ := b.Save(ctx); state != string(read("state.json")) {
		t.Errorf("state differs from state.json:\n%s", state)
	}
	var want map[string]any
	if err := json.Unmarshal(read("views.json"), &want); err != nil {
		t.Fatal(err)
	}
	for key, expected := range want {
		name, arg, _ := strings.Cut(key, ":")
		var got any
		if name == "brief" {
			got, err = b.Brief(ctx, arg)
		} else {
			err = b.View(ctx, name, arg, &got)
		}
		if err != nil || !reflect.DeepEqual(got, expected) {
			t.Errorf("view %s: %v\ngot  %v\nwant %v", key, err, got, expected)
		}
	}

	// The log rebuilds the board, from a fresh one, in order only.
	fresh, err := e.NewBoard(ctx, created.ID, created.Name, created.Goal, created.Constraints, created.MemoryCoreRefs, created.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close(ctx)
	lines := strings.Split(strings.TrimSpace(events.String()), "\n")
	if _, err := fresh.Replay(ctx, lines[1]); err == nil || !strings.Contains(err.Error(), "next event is revision 1") {
		t.Errorf("an out-of-order event replayed: %v", err)
	}
	for _, line := range lines {
		if _, err := fresh.Replay(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	if a, _ := fresh.Save(ctx); a != string(read("state.json")) {
		t.Error("the replayed board differs")
	}
}

// TestBoardApplyTakesAnOpAsAMap: the Go-shaped call, and a view decoded into a struct.
func TestBoardApplyTakesAnOpAsAMap(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	b, err := e.NewBoard(ctx, "b", "Board", "Ship it", nil, nil, Now())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	applied, err := b.Apply(ctx, "orchestrator", Now(), Op{"op": "add_task", "title": "First", "description": "", "depends_on": []string{}, "needs_review": false})
	if err != nil || applied.Revision != 1 {
		t.Fatalf("%v %v", applied, err)
	}
	var ready []struct{ ID, Title, Status string }
	if err := b.View(ctx, "ready", "", &ready); err != nil || len(ready) != 1 || ready[0].ID != "T-1" || ready[0].Status != "pending" {
		t.Fatalf("%v %v", ready, err)
	}
	_, err = b.Apply(ctx, "dev", Now(), Op{"op": "set_status", "task": "T-9", "status": "in_progress"})
	var refused *BoardError
	if !errors.As(err, &refused) || refused.Message != "no task T-9 on this board" || refused.Rule != "unknown-task" {
		t.Fatalf("%v", err)
	}
	_, err = e.NewBoard(ctx, "b", "Board", " ", nil, nil, Now())
	if !errors.As(err, &refused) || refused.Message != "goal is empty; it is required" || refused.Rule != "empty" {
		t.Fatalf("%v", err)
	}
	raw, err := os.ReadFile("../../tests/data/ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var ids struct{ Refused, Accepted []string }
	if err := json.Unmarshal(raw, &ids); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids.Refused {
		_, err = e.NewBoard(ctx, id, "n", "g", nil, nil, Now())
		if !errors.As(err, &refused) || refused.Rule != "invalid-id" {
			t.Errorf("the ID %q: %v", id, err)
		}
	}
	for _, id := range ids.Accepted {
		if _, err := e.NewBoard(ctx, id, "n", "g", nil, nil, Now()); err != nil {
			t.Errorf("the ID %q: %v", id, err)
		}
	}
	_, err = e.LoadBoard(ctx, "{}")
	if !errors.As(err, &refused) || refused.Rule != "" || !strings.HasPrefix(refused.Message, "not a serialized board: ") {
		t.Fatalf("a board that does not load is not a refusal: %#v", err)
	}
}
