// Package workmem is the workmem working-memory engine for Go: the same engine the other
// runtimes load, run on wazero through bindings Gravity generates from the engine-go world's
// core module (package github.com/workmem/workmem/packages/go/engine, made by `make go-bindings`). A Memory lives inside the
// engine; an apply carries the DSL in and the outcome out.
//
// An Engine is not safe for concurrent use; give each goroutine its own.
package workmem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	engine "github.com/workmem/workmem/packages/go/engine"
)

// The engine's records, as Gravity generates them from the engine-go world.
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
	Snapshot      = engine.Snapshot
	ParseOutcome  = engine.ParseOutcome
	Applied       = engine.Applied
	Message       = engine.Message
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

// TrapError is a trap inside the engine other than its memory limit: a bug. The Engine has
// already replaced its instance, and the memories in it are gone; the next call starts fresh.
type TrapError struct{ Cause any }

func (e *TrapError) Error() string {
	return fmt.Sprintf("the engine stopped on an internal error (a bug in workmem; please report it with the input that caused it): %v", e.Cause)
}

// MemoryLimitError is a call that needed more linear memory than Options.MaxMemoryBytes.
// As with a TrapError, the instance and its memories are gone and the next call starts fresh.
type MemoryLimitError struct{ Limit uint64 }

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("the engine needed more than its %d bytes of memory (Options.MaxMemoryBytes raises it)", e.Limit)
}

// DefaultMaxMemoryBytes is what New gives an engine instance: the wasmtime host's default.
const DefaultMaxMemoryBytes = 256 << 20

// Options set up an Engine.
type Options struct {
	// MaxMemoryBytes caps each instance's linear memory. Past it the guest's allocation
	// fails inside the sandbox, which traps, reported as a MemoryLimitError. 0 is
	// DefaultMaxMemoryBytes.
	MaxMemoryBytes uint64
	// CompileCacheDir is where the compiled component is kept for the next process (wazero's
	// compilation cache): compiling is most of a cold start. "" is CacheDir().
	CompileCacheDir string
	// NoCompileCache compiles the component in this process only and keeps nothing.
	NoCompileCache bool
}

// limitedMemory backs an instance's linear memory and refuses to grow past its cap (wazero
// then fails the guest's memory.grow), remembering that it did.
type limitedMemory struct {
	buf     []byte
	max     uint64
	refused *bool
}

func (m *limitedMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		*m.refused = true
		return nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.max))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *limitedMemory) Free() { m.buf = nil }

// ErrLost is returned by a Memory whose engine instance trapped: load it again.
var ErrLost = errors.New("this memory's engine instance trapped, so the memory is gone; load it again")

// Wants says what an applied update returns besides what it changed.
type Wants struct{ Overview, State bool }

// Engine is one instance of the engine component. Not safe for concurrent use.
type Engine struct {
	factory    *engine.EngineGoFactory
	cache      wazero.CompilationCache
	fromCache  bool
	instance   *engine.EngineGoInstance
	generation int
	options    Options
	refused    bool
}

// New compiles the component, or loads it from CacheDir() where an earlier process compiled
// it, and instantiates it, with DefaultMaxMemoryBytes.
func New(ctx context.Context) (*Engine, error) {
	return NewWithOptions(ctx, Options{MaxMemoryBytes: DefaultMaxMemoryBytes})
}

// NewWithOptions is New with the limits in o.
func NewWithOptions(ctx context.Context, o Options) (*Engine, error) {
	if o.MaxMemoryBytes == 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	e := &Engine{options: o}
	dir := o.CompileCacheDir
	if dir == "" {
		dir = CacheDir()
	}
	if o.NoCompileCache {
		dir = ""
	}
	factory, cache, hit, err := compiled(ctx, dir)
	if err != nil {
		return nil, err
	}
	e.factory, e.cache, e.fromCache = factory, cache, hit
	instance, err := factory.Instantiate(e.sandboxed(ctx))
	if err != nil {
		e.closeCompiled(ctx)
		return nil, err
	}
	e.instance = instance
	return e, nil
}

// sandboxed carries the memory cap to wazero, which reads it when an instance is made.
func (e *Engine) sandboxed(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(capacity, _ uint64) experimental.LinearMemory {
		return &limitedMemory{buf: make([]byte, 0, min(capacity, e.options.MaxMemoryBytes)), max: e.options.MaxMemoryBytes, refused: &e.refused}
	}))
}

// FromCache says whether the compiled component was loaded from the compilation cache, not
// compiled by this Engine.
func (e *Engine) FromCache() bool { return e.fromCache }

// Close releases the instance and the compiled component.
func (e *Engine) Close(ctx context.Context) {
	_ = e.instance.Close(ctx)
	e.closeCompiled(ctx)
}

// closeCompiled releases the runtime and the cache's engine, which outlives its runtimes.
func (e *Engine) closeCompiled(ctx context.Context) {
	e.factory.Close(ctx)
	if e.cache != nil {
		_ = e.cache.Close(ctx)
	}
}

// Now is the current time as the engine stores it: RFC 3339, UTC, whole seconds.
func Now() string { return time.Now().UTC().Format(time.RFC3339) }

// call runs f on the instance; Gravity's bindings panic on a trap, which becomes a
// MemoryLimitError or a TrapError, and a fresh instance.
func call[T any](ctx context.Context, e *Engine, f func(*engine.EngineGoInstance) T) (result T, err error) {
	e.refused = false
	defer func() {
		if r := recover(); r != nil {
			if e.refused {
				err = &MemoryLimitError{Limit: e.options.MaxMemoryBytes}
			} else {
				err = &TrapError{Cause: r}
			}
			_ = e.instance.Close(ctx)
			e.generation++
			if fresh, ierr := e.factory.Instantiate(e.sandboxed(ctx)); ierr == nil {
				e.instance = fresh
			}
		}
	}()
	return f(e.instance), nil
}

// Parse reads a DSL update. Bad input is reported in the outcome (Ok false, Diagnostics),
// not as an error; the error is only for a trap.
func (e *Engine) Parse(ctx context.Context, text string) (ParseOutcome, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) ParseOutcome { return i.Parse(ctx, text) })
}

// OverviewTemplate is the guiding overview.md of a new session.
func (e *Engine) OverviewTemplate(ctx context.Context) (string, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) string { return i.OverviewTemplate(ctx) })
}

// Memory is a working memory kept inside the engine; Close releases it.
type Memory struct {
	e          *Engine
	handle     uint32
	generation int
}

// NewMemory is the memory of a new session.
func (e *Engine) NewMemory(ctx context.Context) (*Memory, error) {
	type created struct {
		h   uint32
		err error
	}
	r, err := call(ctx, e, func(i *engine.EngineGoInstance) created {
		h, err := i.MemoryNew(ctx)
		return created{h, err}
	})
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, err
	}
	return &Memory{e, r.h, e.generation}, nil
}

// LoadMemory is a memory from its serialized form (Save, or a session's state.json from any runtime).
func (e *Engine) LoadMemory(ctx context.Context, state string) (*Memory, error) {
	type loaded struct {
		h   uint32
		err error
	}
	r, err := call(ctx, e, func(i *engine.EngineGoInstance) loaded {
		h, err := i.MemoryLoad(ctx, state)
		return loaded{h, err}
	})
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, &InvalidError{Message: r.err.Error()}
	}
	return &Memory{e, r.h, e.generation}, nil
}

func onMemory[T any](ctx context.Context, m *Memory, f func(*engine.EngineGoInstance) T) (T, error) {
	if m.generation != m.e.generation {
		var zero T
		return zero, ErrLost
	}
	return call(ctx, m.e, f)
}

// Close releases the memory inside the engine.
func (m *Memory) Close(ctx context.Context) {
	if m.generation == m.e.generation {
		_, _ = call(ctx, m.e, func(i *engine.EngineGoInstance) error { return i.MemoryDrop(ctx, m.handle) })
	}
}

// Save is state.json: the engine's serialized form, the same bytes from every runtime.
func (m *Memory) Save(ctx context.Context) (string, error) {
	return onMemory(ctx, m, func(i *engine.EngineGoInstance) string { return i.MemorySave(ctx, m.handle) })
}

// Validate is Parse plus warnings for ARCHIVEs of IDs this memory does not have.
func (m *Memory) Validate(ctx context.Context, text string) (ParseOutcome, error) {
	return onMemory(ctx, m, func(i *engine.EngineGoInstance) ParseOutcome { return i.MemoryValidate(ctx, m.handle, text) })
}

// Apply parses, validates and merges text at the time now (see Now). An update with errors
// returns an *InvalidError carrying the diagnostics, and changes nothing.
func (m *Memory) Apply(ctx context.Context, text, now string, wants Wants) (Applied, error) {
	out, err := onMemory(ctx, m, func(i *engine.EngineGoInstance) engine.ApplyOutcome {
		return i.MemoryApply(ctx, m.handle, text, now, wants.Overview, wants.State)
	})
	if err != nil {
		return Applied{}, err
	}
	if !out.Ok {
		return Applied{}, invalid(out.Diagnostics)
	}
	return out.Applied, nil
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

// Merge applies update values, in order, all or none; an invalid one returns an *InvalidError.
func (m *Memory) Merge(ctx context.Context, updates []Update, now string, wants Wants) (Applied, error) {
	type result struct {
		out Applied
		err error
	}
	r, err := onMemory(ctx, m, func(i *engine.EngineGoInstance) result {
		out, err := i.MemoryMerge(ctx, m.handle, updates, now, wants.Overview, wants.State)
		return result{out, err}
	})
	if err != nil {
		return Applied{}, err
	}
	if r.err != nil {
		return Applied{}, &InvalidError{Message: r.err.Error()}
	}
	return r.out, nil
}

// Render is the memory as working-memory/overview.md.
func (m *Memory) Render(ctx context.Context) (string, error) {
	return onMemory(ctx, m, func(i *engine.EngineGoInstance) string { return i.MemoryRender(ctx, m.handle) })
}

// Snapshot is a copy of the whole memory.
func (m *Memory) Snapshot(ctx context.Context) (Snapshot, error) {
	return onMemory(ctx, m, func(i *engine.EngineGoInstance) Snapshot { return i.MemorySnapshot(ctx, m.handle) })
}

// UpdatePrompt is the unified memory-update prompt for task.
func (m *Memory) UpdatePrompt(ctx context.Context, task string) (string, error) {
	return onMemory(ctx, m, func(i *engine.EngineGoInstance) string { return i.MemoryUpdatePrompt(ctx, m.handle, task) })
}

// Updated is a memory update applied after Attempts model calls.
type Updated struct {
	Applied
	Attempts int
}

// Update runs spec 000's memory update with any model client: ask gets the conversation and
// returns the model's text. A malformed answer is sent back with its diagnostics, at most
// maxReprompts times; a valid one is applied (with the new overview and state). When every
// answer was malformed it returns an *InvalidError and changes nothing.
func (m *Memory) Update(ctx context.Context, task string, ask func(context.Context, []Message) (string, error), maxReprompts uint32) (Updated, error) {
	type begun struct {
		run uint32
		err error
	}
	b, err := onMemory(ctx, m, func(i *engine.EngineGoInstance) begun {
		run, err := i.UpdateBegin(ctx, m.handle, task, maxReprompts)
		return begun{run, err}
	})
	if err == nil {
		err = b.err
	}
	if err != nil {
		return Updated{}, err
	}
	run := b.run
	defer func() {
		_, _ = onMemory(ctx, m, func(i *engine.EngineGoInstance) error { return i.UpdateDrop(ctx, run) })
	}()
	for attempts := 1; ; attempts++ {
		request, err := onMemory(ctx, m, func(i *engine.EngineGoInstance) []Message { return i.UpdateRequest(ctx, run) })
		if err != nil {
			return Updated{}, err
		}
		answer, err := ask(ctx, request)
		if err != nil {
			return Updated{}, fmt.Errorf("the model call failed, so nothing was applied: %w", err)
		}
		step, err := onMemory(ctx, m, func(i *engine.EngineGoInstance) engine.UpdateStep {
			return i.UpdateAnswer(ctx, run, m.handle, answer, Now(), true, true)
		})
		if err != nil {
			return Updated{}, err
		}
		switch step.Kind {
		case "applied":
			return Updated{step.Applied, attempts}, nil
		case "gave-up":
			bad := invalid(step.Diagnostics)
			bad.Message = fmt.Sprintf("the model's answer was still invalid after %d attempts; nothing was applied: %s", attempts, bad.Message)
			return Updated{}, bad
		}
	}
}

// Compaction (spec 003): the history view of a log of messages and compactions, planned in
// the engine. Sequence numbers are uint32 in Go (Gravity has no u64).
type (
	ToolCall     = engine.ToolCall
	ChatMessage  = engine.ChatMessage
	HistoryEntry = engine.HistoryEntry
	Replacement  = engine.Replacement
	Compaction   = engine.Compaction
)

// Target is what a compaction replaces.
type Target uint32

const (
	TargetConversation Target = 0 // user and assistant messages that call no tool
	TargetTools        Target = 1 // tool outputs, each by a placeholder in place
	TargetAll          Target = 2 // everything old, tool calls with their results
)

// Strategy is how a compaction replaces what it replaces.
type Strategy uint32

const (
	StrategySummarize Strategy = 0 // the model writes the replacement
	StrategyArchive   Strategy = 1 // the originals go to the archive file; no model call
)

// CompactRequest is compact_history's arguments; KeepRecent is spec 003's keep_recent.
type CompactRequest struct {
	Target       Target
	Strategy     Strategy
	KeepRecent   uint32
	ArchiveTo    string
	ArchiveLines uint32
	NeverCompact []string
	MinFree      uint32
	Keep         []uint32
}

// CompactionRefused says why nothing was compacted (append nothing): Kind is "nothing",
// "empty-summary", "invariant" or "bad-request".
type CompactionRefused struct{ Kind, Message string }

func (e *CompactionRefused) Error() string { return e.Message }

// Compact runs spec 003's compact_history over view (oldest first). With StrategySummarize,
// ask gets the engine's request and returns the model's summary. The result holds the
// replacements to append to your log, the text to append to ArchiveTo, and the view after.
func (e *Engine) Compact(ctx context.Context, view []HistoryEntry, r CompactRequest, ask func(context.Context, []ChatMessage) (string, error)) (Compaction, error) {
	request := engine.CompactRequest{
		Target: uint32(r.Target), Strategy: uint32(r.Strategy), KeepRecent: r.KeepRecent, ArchiveTo: r.ArchiveTo,
		ArchiveLines: r.ArchiveLines, NeverCompact: r.NeverCompact, MinFree: r.MinFree, Keep: r.Keep,
	}
	for {
		step, err := call(ctx, e, func(i *engine.EngineGoInstance) engine.CompactStep { return i.HistoryCompact(ctx, view, request) })
		if err != nil {
			return Compaction{}, err
		}
		switch step.Kind {
		case "done":
			return step.Compaction, nil
		case "ask":
			if ask == nil {
				return Compaction{}, &CompactionRefused{"nothing", "StrategySummarize needs ask, a model client"}
			}
			summary, err := ask(ctx, step.Ask)
			if err != nil {
				return Compaction{}, fmt.Errorf("the model call failed, so nothing was compacted: %w", err)
			}
			request.Answered, request.Summary = true, summary
		default:
			return Compaction{}, &CompactionRefused{step.Kind, step.Error}
		}
	}
}

// FallbackRequest is the fallback's input (spec 003 §3): Used is the whole request's tokens.
type FallbackRequest = engine.FallbackRequest

// Fallback is the fallback: nil while Used is under Threshold; otherwise an archive
// compaction down towards Goal.
func (e *Engine) Fallback(ctx context.Context, view []HistoryEntry, r FallbackRequest) (*Compaction, error) {
	out, err := call(ctx, e, func(i *engine.EngineGoInstance) engine.FallbackOutcome { return i.HistoryFallback(ctx, view, r) })
	if err != nil || !out.Compacted {
		return nil, err
	}
	return &out.Compaction, nil
}

// ApplyReplacements is the view after replacements: how a log of messages and compactions reads back.
func (e *Engine) ApplyReplacements(ctx context.Context, view []HistoryEntry, replacements []Replacement) ([]HistoryEntry, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) []HistoryEntry {
		return i.HistoryApplyReplacements(ctx, view, replacements)
	})
}

// ContextRequest is what one request to the model is assembled from (spec 001): the agent's
// system prompt, AGENTS.md (empty for none), overview.md, the history (oldest first), where
// the active turn starts in it, the history mode (HistoryAuto and so on; LastN with
// HistoryLastN) and the paths the instructions name.
type ContextRequest = engine.ContextRequest

// History modes of ContextRequest.HistoryMode.
const (
	HistoryAuto       uint32 = 0 // the whole history until overview.md is maintained, then the active turn
	HistoryAll        uint32 = 1 // the whole history
	HistoryActiveTurn uint32 = 2 // only the active turn (spec 003's default)
	HistoryLastN      uint32 = 3 // the last LastN messages, and at least the active turn
)

// The paths the working-memory instructions name, as a session directory lays them out.
const (
	DefaultOverviewPath = "working-memory/overview.md"
	DefaultDetailPath   = "working-memory/detail/"
)

// ContextStats are the figures of a context_meta block (spec 001 US-3); a 0 in
// RemindAfterRounds, StrongReminderTokens or CompactAt means none.
type ContextStats = engine.ContextStats

// Assemble is the request in spec 001's order, its prefix byte-identical while the inputs
// before the history do not change. Count its tokens, then append ContextMeta's block last,
// as a system message. Empty paths are the session directory's own (DefaultOverviewPath,
// DefaultDetailPath).
func (e *Engine) Assemble(ctx context.Context, r ContextRequest) ([]ChatMessage, error) {
	if r.OverviewPath == "" {
		r.OverviewPath = DefaultOverviewPath
	}
	if r.DetailPath == "" {
		r.DetailPath = DefaultDetailPath
	}
	return call(ctx, e, func(i *engine.EngineGoInstance) []ChatMessage { return i.ContextAssemble(ctx, r) })
}

// ContextMeta is the context_meta block of spec 001 US-3, reminder line included.
func (e *Engine) ContextMeta(ctx context.Context, s ContextStats) (string, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) string { return i.ContextMeta(ctx, s) })
}

// OverviewMaintained says whether overview.md holds content beyond the template; until it
// does, HistoryAuto keeps the whole history in the request.
func (e *Engine) OverviewMaintained(ctx context.Context, overview string) (bool, error) {
	// The result's error never happens (see go.wit).
	return call(ctx, e, func(i *engine.EngineGoInstance) bool {
		maintained, _ := i.ContextOverviewMaintained(ctx, overview)
		return maintained
	})
}
