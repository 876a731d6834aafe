package workmem

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	engine "github.com/workmem/workmem/packages/go/engine"
)

// Board is spec 002's shared task board, kept inside the engine: an orchestrator's and its
// workers' task-scoped working memory. It changes only through Apply, which checks an op
// against the board's rules and applies all of it or nothing. Store the Event each Apply
// returns to keep an append-only log; Replay rebuilds a board from it. Close releases it.
type Board struct {
	e          *Engine
	handle     uint32
	generation int
}

// BoardApplied is what an applied op made: the board's new revision and the event the log keeps
// (the engine's JSON: revision, actor, at, op).
type BoardApplied struct {
	Revision uint32
	Event    string
}

// BoardError is an op the engine refused (an unknown task, an illegal transition, a cycle,
// an empty or oversized field, ...), in the engine's words. Nothing was applied. Rule names
// the rule as the engine's board-error does ("unknown-task", "illegal-transition",
// "waiting", "cycle", "closed", "needs-review", "too-large", "claimed", "invalid-op", ...),
// for a program to act on; it is empty when the error is not a refusal (a board that does
// not load, an event that is not the next one).
type BoardError struct {
	Rule    string
	Message string
}

func (e *BoardError) Error() string { return e.Message }

func boardError(err error) *BoardError {
	rule, message := refusal(err)
	return &BoardError{Rule: rule, Message: message}
}

// refusal reads the engine's "<rule>: <sentence>" for a refusal (see wit/go.wit); any other
// error is a sentence alone.
func refusal(err error) (rule, message string) {
	text := err.Error()
	if rule, sentence, ok := strings.Cut(text, ": "); ok && isRule(rule) {
		return rule, sentence
	}
	return "", text
}

func isRule(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return s != ""
}

type handleOrErr struct {
	h   uint32
	err error
}

func (e *Engine) board(ctx context.Context, f func(*engine.EngineGoInstance) (uint32, error)) (*Board, error) {
	r, err := call(ctx, e, func(i *engine.EngineGoInstance) handleOrErr {
		h, err := f(i)
		return handleOrErr{h, err}
	})
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, boardError(r.err)
	}
	return &Board{e, r.h, e.generation}, nil
}

// NewBoard is a new, active board at revision 0, created at now (see Now).
func (e *Engine) NewBoard(ctx context.Context, id, name, goal string, constraints, memoryCoreRefs []string, now string) (*Board, error) {
	return e.board(ctx, func(i *engine.EngineGoInstance) (uint32, error) {
		return i.BoardCreate(ctx, id, name, goal, orEmpty(constraints), orEmpty(memoryCoreRefs), now)
	})
}

// LoadBoard is a board from its serialized form (Save, from any runtime).
func (e *Engine) LoadBoard(ctx context.Context, state string) (*Board, error) {
	return e.board(ctx, func(i *engine.EngineGoInstance) (uint32, error) { return i.BoardLoad(ctx, state) })
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func onBoard[T any](ctx context.Context, b *Board, f func(*engine.EngineGoInstance) (T, error)) (T, error) {
	var zero T
	if b.generation != b.e.generation {
		return zero, ErrLost
	}
	type result struct {
		v   T
		err error
	}
	r, err := call(ctx, b.e, func(i *engine.EngineGoInstance) result {
		v, err := f(i)
		return result{v, err}
	})
	if err != nil {
		return zero, err
	}
	if r.err != nil {
		return zero, boardError(r.err)
	}
	return r.v, nil
}

// Close releases the board inside the engine.
func (b *Board) Close(ctx context.Context) {
	if b.generation == b.e.generation {
		_, _ = call(ctx, b.e, func(i *engine.EngineGoInstance) error { return i.BoardDrop(ctx, b.handle) })
	}
}

// Save is the serialized board: the same bytes from every runtime.
func (b *Board) Save(ctx context.Context) (string, error) {
	return onBoard(ctx, b, func(i *engine.EngineGoInstance) (string, error) { return i.BoardSave(ctx, b.handle), nil })
}

// Revision is how many ops were applied since creation: what a writer compares and swaps on.
func (b *Board) Revision(ctx context.Context) (uint32, error) {
	return onBoard(ctx, b, func(i *engine.EngineGoInstance) (uint32, error) { return i.BoardRevision(ctx, b.handle) })
}

// Op is an op in the form the event log records it: "op" names it ("add_task", "assign",
// "set_status", "complete", "review", "decide", "discover", "artifact", "nudge", "approve",
// "heartbeat", "reclaim", "close", "archive"), the other keys are its fields.
type Op map[string]any

// Apply applies op by actor at now: all of it, or nothing and a *BoardError saying why.
func (b *Board) Apply(ctx context.Context, actor, now string, op Op) (BoardApplied, error) {
	text, err := json.Marshal(op)
	if err != nil {
		return BoardApplied{}, fmt.Errorf("the op does not marshal to JSON: %w", err)
	}
	return b.ApplyJSON(ctx, actor, now, string(text))
}

// ApplyJSON is Apply with the op already JSON text.
func (b *Board) ApplyJSON(ctx context.Context, actor, now, op string) (BoardApplied, error) {
	out, err := onBoard(ctx, b, func(i *engine.EngineGoInstance) (engine.BoardApplied, error) {
		return i.BoardApply(ctx, b.handle, actor, now, op)
	})
	return BoardApplied{Revision: out.Revision, Event: out.Event}, err
}

// Replay applies the board's next event from its log (a BoardApplied.Event); it returns the new
// revision, or a *BoardError when the event is not the next one or does not fit the board.
func (b *Board) Replay(ctx context.Context, event string) (uint32, error) {
	return onBoard(ctx, b, func(i *engine.EngineGoInstance) (uint32, error) { return i.BoardReplay(ctx, b.handle, event) })
}

// View decodes a view into out: "tasks", "ready", "blocked", "in_progress", "needs_review",
// "failed", "stranded", "decisions", "discoveries", "artifacts", "nudges", "contributions",
// "candidates", "stale" (arg: a time) or "context_for_task" (arg: a task ID).
func (b *Board) View(ctx context.Context, name, arg string, out any) error {
	text, err := onBoard(ctx, b, func(i *engine.EngineGoInstance) (string, error) { return i.BoardView(ctx, b.handle, name, arg) })
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(text), out)
}

// Brief is a task's context as a worker's LLM reads it (markdown).
func (b *Board) Brief(ctx context.Context, task string) (string, error) {
	return onBoard(ctx, b, func(i *engine.EngineGoInstance) (string, error) { return i.BoardBrief(ctx, b.handle, task) })
}
