// Package workmem is the workmem working-memory engine for Go: the same WebAssembly
// component the other runtimes load, run on wazero through bindings Gravity generates from
// the engine's core module (package workmem/engine, made by `make go`).
//
// An Engine is not safe for concurrent use; give each goroutine its own.
package workmem

import (
	"context"
	"fmt"
	"strings"
	"time"

	"workmem/engine"
)

// The engine's records, as Gravity generates them from the WIT.
type (
	Diagnostic    = engine.Diagnostic
	Progress      = engine.Progress
	Update        = engine.Update
	LearningAdd   = engine.LearningAdd
	VerbatimAdd   = engine.VerbatimAdd
	ArchiveOp     = engine.ArchiveOp
	LearningOps   = engine.LearningOps
	VerbatimOps   = engine.VerbatimOps
	Learning      = engine.Learning
	VerbatimEntry = engine.VerbatimEntry
	MemoryState   = engine.MemoryState
	ParseOutcome  = engine.ParseOutcome
	MergeOutcome  = engine.MergeOutcome
)

// Severity values of Diagnostic.Severity.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// InvalidError is an update the engine refused; Diagnostics say where (1-based line:column).
type InvalidError struct {
	Diagnostics []Diagnostic
	Message     string
}

func (e *InvalidError) Error() string { return e.Message }

// TrapError is a trap inside the engine (a bug, or a resource limit). The Engine has
// already replaced its instance; the next call starts fresh.
type TrapError struct{ Cause any }

func (e *TrapError) Error() string { return fmt.Sprintf("the engine component trapped: %v", e.Cause) }

// Applied is a successful Apply: the merge outcome and any warnings.
type Applied struct {
	MergeOutcome
	Warnings []Diagnostic
}

// Engine is one instance of the engine component.
type Engine struct {
	factory  *engine.EngineFactory
	instance *engine.EngineInstance
}

// New compiles the component (the slow part, tens of milliseconds) and instantiates it.
func New(ctx context.Context) (*Engine, error) {
	factory, err := engine.NewEngineFactory(ctx)
	if err != nil {
		return nil, err
	}
	instance, err := factory.Instantiate(ctx)
	if err != nil {
		factory.Close(ctx)
		return nil, err
	}
	return &Engine{factory, instance}, nil
}

// Close releases the instance and the compiled component.
func (e *Engine) Close(ctx context.Context) {
	_ = e.instance.Close(ctx)
	e.factory.Close(ctx)
}

// Now is the current time as the engine stores it: RFC 3339, UTC, whole seconds.
func Now() string { return time.Now().UTC().Format(time.RFC3339) }

// call runs f on the instance; Gravity's bindings panic on a trap, which becomes a TrapError
// and a fresh instance.
func call[T any](ctx context.Context, e *Engine, f func(*engine.EngineInstance) T) (result T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &TrapError{Cause: r}
			_ = e.instance.Close(ctx)
			if fresh, ierr := e.factory.Instantiate(ctx); ierr == nil {
				e.instance = fresh
			}
		}
	}()
	return f(e.instance), nil
}

// Parse reads a DSL update. Bad input is reported in the outcome (OK false, Diagnostics),
// not as an error; the error is only for a trap.
func (e *Engine) Parse(ctx context.Context, text string) (ParseOutcome, error) {
	return call(ctx, e, func(i *engine.EngineInstance) ParseOutcome { return i.Parse(ctx, text) })
}

// Validate is Parse plus warnings for ARCHIVEs of IDs the state does not have.
func (e *Engine) Validate(ctx context.Context, text string, state MemoryState) (ParseOutcome, error) {
	return call(ctx, e, func(i *engine.EngineInstance) ParseOutcome { return i.Validate(ctx, text, state) })
}

// Apply parses, validates and merges text into state at the time now (see Now). An update
// with errors returns an *InvalidError carrying the diagnostics.
func (e *Engine) Apply(ctx context.Context, state MemoryState, text, now string) (Applied, error) {
	out, err := call(ctx, e, func(i *engine.EngineInstance) engine.ApplyOutcome { return i.Apply(ctx, state, text, now) })
	if err != nil {
		return Applied{}, err
	}
	if !out.Ok {
		return Applied{}, invalid(out.Diagnostics)
	}
	return Applied{out.Merged, out.Diagnostics}, nil
}

func invalid(ds []Diagnostic) *InvalidError {
	var errs []string
	for _, d := range ds {
		if d.Severity == SeverityError {
			errs = append(errs, fmt.Sprintf("%d:%d: %s", d.Line, d.Column, d.Message))
		}
	}
	return &InvalidError{Diagnostics: ds, Message: fmt.Sprintf("the update has %d error(s): %s", len(errs), strings.Join(errs, "; "))}
}

// Merge applies update values, in order, to state; an invalid one returns an *InvalidError
// and none is applied.
func (e *Engine) Merge(ctx context.Context, state MemoryState, updates []Update, now string) (MergeOutcome, error) {
	type result struct {
		out MergeOutcome
		err error
	}
	r, err := call(ctx, e, func(i *engine.EngineInstance) result {
		out, err := i.Merge(ctx, state, updates, now)
		return result{out, err}
	})
	if err != nil {
		return MergeOutcome{}, err
	}
	if r.err != nil {
		return MergeOutcome{}, &InvalidError{Message: r.err.Error()}
	}
	return r.out, nil
}

// Render is the state as working-memory/overview.md.
func (e *Engine) Render(ctx context.Context, state MemoryState) (string, error) {
	return call(ctx, e, func(i *engine.EngineInstance) string { return i.Render(ctx, state) })
}

// UpdatePrompt is the unified memory-update prompt for task.
func (e *Engine) UpdatePrompt(ctx context.Context, state MemoryState, task string) (string, error) {
	return call(ctx, e, func(i *engine.EngineInstance) string { return i.UpdatePrompt(ctx, state, task) })
}

// OverviewTemplate is the guiding overview.md of a new session.
func (e *Engine) OverviewTemplate(ctx context.Context) (string, error) {
	return call(ctx, e, func(i *engine.EngineInstance) string { return i.OverviewTemplate(ctx) })
}

// EmptyState is the memory of a new session.
func (e *Engine) EmptyState(ctx context.Context) (MemoryState, error) {
	return call(ctx, e, func(i *engine.EngineInstance) MemoryState { return i.EmptyState(ctx) })
}
