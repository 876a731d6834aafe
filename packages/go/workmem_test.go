package workmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var tests = filepath.Join("..", "..", "tests")

func newEngine(t *testing.T) *Engine {
	t.Helper()
	ctx := context.Background()
	e, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(ctx) })
	return e
}

var upper = regexp.MustCompile(`[A-Z]`)

// wire turns Gravity's structs into the CLI's JSON values: snake_case keys, numbers as
// float64, and an update's empty progress ("not rewritten") as null.
func wire(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			name := strings.TrimPrefix(upper.ReplaceAllStringFunc(v.Type().Field(i).Name, func(s string) string { return "_" + strings.ToLower(s) }), "_")
			m[name] = wire(v.Field(i))
		}
		if p, ok := v.Interface().(Progress); ok && len(p.InProgress) == 0 && len(p.Completed) == 0 && len(p.Remaining) == 0 {
			return nil
		}
		return m
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = wire(v.Index(i))
		}
		return out
	case reflect.Uint32:
		return float64(v.Uint())
	default:
		return v.Interface()
	}
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func dsl(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.dsl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func TestCorpus(t *testing.T) {
	e := newEngine(t)
	cases := dsl(t, filepath.Join(tests, "corpus"))
	if len(cases) < 40 {
		t.Fatalf("the corpus has only %d cases", len(cases))
	}
	for _, path := range cases {
		t.Run(filepath.Base(path), func(t *testing.T) {
			text, _ := os.ReadFile(path)
			out, err := e.Parse(context.Background(), string(text))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{"ok": out.Ok, "update": nil, "diagnostics": wire(reflect.ValueOf(out.Diagnostics))}
			if out.Ok {
				got["update"] = wire(reflect.ValueOf(out.Update))
			}
			want := readJSON(t, strings.TrimSuffix(path, ".dsl")+".json")
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				t.Fatalf("got\n%s", g)
			}
		})
	}
}

func TestScenarios(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	dirs, _ := filepath.Glob(filepath.Join(tests, "scenarios", "*"))
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			memory, err := e.NewMemory(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i, path := range dsl(t, dir) {
				stem := strings.TrimSuffix(path, ".dsl")
				text, _ := os.ReadFile(path)
				at := fmt.Sprintf("2026-01-01T00:00:%02dZ", i+1)
				var got map[string]any
				applied, err := memory.Apply(ctx, string(text), at, Wants{})
				var bad *InvalidError
				switch {
				case err == nil:
					got = map[string]any{"ok": true, "added": wire(reflect.ValueOf(applied.Added)), "archived": wire(reflect.ValueOf(applied.Archived)),
						"ignored": wire(reflect.ValueOf(applied.Ignored)), "diff": applied.Diff, "diagnostics": wire(reflect.ValueOf(applied.Warnings))}
				case errors.As(err, &bad):
					got = map[string]any{"ok": false, "added": []any{}, "archived": []any{}, "ignored": []any{}, "diff": nil,
						"diagnostics": wire(reflect.ValueOf(bad.Diagnostics))}
				default:
					t.Fatal(err)
				}
				if want := readJSON(t, stem+".expected.json"); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: got %#v", stem, got)
				}
				overview, _ := os.ReadFile(stem + ".overview.md")
				if rendered, _ := memory.Render(ctx); rendered != string(overview) {
					t.Fatalf("%s: rendered\n%s", stem, rendered)
				}
			}
			// The serialized memory is the same bytes the Rust host wrote, and loads back.
			want, _ := os.ReadFile(filepath.Join(dir, "final.state.json"))
			if saved, _ := memory.Save(ctx); saved != string(want) {
				t.Fatalf("saved\n%s", saved)
			}
			loaded, err := e.LoadMemory(ctx, string(want))
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := loaded.Save(ctx); again != string(want) {
				t.Fatalf("load then save changed it:\n%s", again)
			}
		})
	}
}

func TestInvalidUpdatesAreErrorsWithDiagnosticsAndChangeNothing(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	memory, _ := e.NewMemory(ctx)
	before, _ := memory.Save(ctx)
	_, err := memory.Apply(ctx, "KEY_LEARNINGS:\n  ADD:\n    - no reason\n", Now(), Wants{})
	var bad *InvalidError
	if !errors.As(err, &bad) || len(bad.Diagnostics) != 1 || bad.Diagnostics[0].Line != 3 || bad.Diagnostics[0].Column != 7 {
		t.Fatalf("want an InvalidError at 3:7, got %v", err)
	}
	if after, _ := memory.Save(ctx); after != before {
		t.Fatal("a refused update changed the memory")
	}
	blank := Update{Learnings: LearningOps{Add: []LearningAdd{{Reason: " ", Text: "x"}}}}
	if _, err := memory.Merge(ctx, []Update{{}, blank}, Now(), Wants{}); !errors.As(err, &bad) || !strings.Contains(err.Error(), "non-empty reason") {
		t.Fatalf("want the component's err as an InvalidError, got %v", err)
	}
	out, err := memory.Merge(ctx, []Update{{Learnings: LearningOps{Add: []LearningAdd{{Reason: "r", Text: "a"}, {Reason: "r", Text: "b"}}}}}, Now(), Wants{State: true})
	if err != nil || !reflect.DeepEqual(out.Added, []string{"KL-1", "KL-2"}) || out.State == "" || out.Overview != "" {
		t.Fatalf("merge: %v %v", out, err)
	}
	if _, err := e.LoadMemory(ctx, "{}"); !errors.As(err, &bad) {
		t.Fatalf("want a load error, got %v", err)
	}
}

func TestMemoryUpdateAsStepsReprompsThenApplies(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	memory, _ := e.NewMemory(ctx)
	answers := []string{"KEY_LEARNINGS:\n  ADD:\n    - no reason\n", "KEY_LEARNINGS:\n  ADD:\n    - because found: the fix\n"}
	var seen [][]Message
	ask := func(_ context.Context, messages []Message) (string, error) {
		seen = append(seen, messages)
		answer := answers[0]
		answers = answers[1:]
		return answer, nil
	}
	updated, err := memory.Update(ctx, "Fix the flaky test", ask, 2)
	if err != nil || updated.Attempts != 2 || !reflect.DeepEqual(updated.Added, []string{"KL-1"}) {
		t.Fatalf("update: %+v %v", updated, err)
	}
	if !strings.Contains(seen[0][1].Content, "Fix the flaky test") || !strings.Contains(seen[1][len(seen[1])-1].Content, "line 3, column 7") {
		t.Fatalf("conversation: %+v", seen)
	}
	if saved, _ := memory.Save(ctx); saved != updated.State {
		t.Fatal("the update's state is not the memory's")
	}
	stubborn := func(context.Context, []Message) (string, error) { return "nonsense", nil }
	var bad *InvalidError
	if _, err := memory.Update(ctx, "t", stubborn, 1); !errors.As(err, &bad) || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Fatalf("want the update to give up, got %v", err)
	}
}

// A real trap inside the guest: an update larger than the instance's memory cap makes the
// guest's allocation fail, which aborts inside the sandbox.
func TestTheMemoryLimitTrapsTheGuestAndTheEngineRecovers(t *testing.T) {
	ctx := context.Background()
	e, err := NewWithOptions(ctx, Options{MaxMemoryBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(ctx) })
	memory, err := e.NewMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	huge := "KEY_LEARNINGS:\n  ADD:\n" + strings.Repeat("    - because it is big: a learning that takes up space in the guest\n", 50_000)
	var limit *MemoryLimitError
	if _, err := e.Parse(ctx, huge); !errors.As(err, &limit) || limit.Limit != 2<<20 || !strings.Contains(err.Error(), "needed more than its 2097152 bytes") {
		t.Fatalf("want a MemoryLimitError, got %v", err)
	}
	out, err := e.Parse(ctx, "CURRENT_PROGRESS:\n  In Progress:\n    - again\n")
	if err != nil || !out.Ok {
		t.Fatalf("the engine did not recover: %v", err)
	}
	if _, err := memory.Render(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("want ErrLost for a memory of the trapped instance, got %v", err)
	}
	// The default cap is the wasmtime host's, and the same update fits under it.
	big, _ := New(ctx)
	defer big.Close(ctx)
	if out, err := big.Parse(ctx, huge); err != nil || !out.Ok {
		t.Fatalf("under the default cap: %v", err)
	}
}

// toolLoop is the same tool loop the JS and Python tests compact.
func toolLoop(rounds int) []HistoryEntry {
	view := []HistoryEntry{{Seq: 1, Message: ChatMessage{Role: "user", Content: "Fix the flaky test"}}}
	for r := 0; r < rounds; r++ {
		id := fmt.Sprintf("call-%d", r)
		view = append(view,
			HistoryEntry{Seq: uint32(2 + 2*r), Message: ChatMessage{Role: "assistant", Content: fmt.Sprintf("step %d", r), ToolCalls: []ToolCall{{Id: id, Name: "bash", Arguments: "{}"}}}, Tokens: 10},
			HistoryEntry{Seq: uint32(3 + 2*r), Message: ChatMessage{Role: "tool", Content: fmt.Sprintf("output %d\n%s", r, strings.Repeat("x", 2000)), ToolCallId: id}, Tokens: 500})
	}
	return view
}

func TestCompactOffloadsOldToolOutputsAndReplaysFromTheLog(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	view := toolLoop(6)
	done, err := e.Compact(ctx, view, CompactRequest{Target: TargetTools, Strategy: StrategyArchive, KeepRecent: 2, ArchiveTo: "working-memory/detail/h.md"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var replaced [][]uint32
	for _, r := range done.Replacements {
		replaced = append(replaced, r.Replaces)
		if !strings.HasPrefix(r.Message.Content, "[offloaded output of bash: ") || r.Message.ToolCallId == "" {
			t.Errorf("placeholder %+v", r.Message)
		}
	}
	if !reflect.DeepEqual(replaced, [][]uint32{{3}, {5}, {7}, {9}}) {
		t.Errorf("replaced %v", replaced)
	}
	if !strings.Contains(done.Archive, "output 0\n") || done.TokensAfter >= done.TokensBefore {
		t.Errorf("archive or tokens: %d -> %d", done.TokensBefore, done.TokensAfter)
	}
	again, err := e.ApplyReplacements(ctx, view, done.Replacements)
	if err != nil || !reflect.DeepEqual(again, done.View) {
		t.Errorf("the view read back differs: %v", err)
	}
}

func TestCompactSummarizesWithAModelAndRefusesWithAKind(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	view := toolLoop(5)
	var asked []ChatMessage
	summary := "Goal: fix the flaky test (#1); steps 0-3 found nothing (#2-#9)."
	done, err := e.Compact(ctx, view, CompactRequest{Target: TargetAll, Strategy: StrategySummarize, KeepRecent: 1}, func(_ context.Context, m []ChatMessage) (string, error) {
		asked = m
		return summary, nil
	})
	if err != nil || !strings.Contains(asked[1].Content, "### #3 tool bash") {
		t.Fatalf("%v %v", err, asked)
	}
	if !strings.HasSuffix(done.View[1].Message.Content, summary) {
		t.Errorf("summary not in place: %q", done.View[1].Message.Content)
	}
	var refused *CompactionRefused
	_, err = e.Compact(ctx, view, CompactRequest{Target: TargetAll, Strategy: StrategySummarize, KeepRecent: 1}, func(context.Context, []ChatMessage) (string, error) { return " ", nil })
	if !errors.As(err, &refused) || refused.Kind != "empty-summary" {
		t.Errorf("empty summary: %v", err)
	}
	_, err = e.Compact(ctx, view, CompactRequest{Target: TargetAll, Strategy: StrategyArchive, KeepRecent: 50}, nil)
	if !errors.As(err, &refused) || refused.Kind != "nothing" {
		t.Errorf("nothing: %v", err)
	}
	if net, err := e.Fallback(ctx, view, FallbackRequest{Used: 100, Threshold: 1000, Goal: 500}); err != nil || net != nil {
		t.Errorf("under the threshold: %v %v", net, err)
	}
	net, err := e.Fallback(ctx, view, FallbackRequest{Used: 3000, Threshold: 2000, Goal: 1000, KeepRecent: 1})
	if err != nil || net == nil || !strings.Contains(net.Notice, "automatically") {
		t.Errorf("over the threshold: %v %v", net, err)
	}
}
