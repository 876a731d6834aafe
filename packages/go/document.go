package workmem

import (
	"context"

	engine "github.com/workmem/workmem/packages/go/engine"
)

// Spec 004's single context document: one text per memory with labeled sections (# Name
// headings). The engine holds the rules a store applies before keeping a version, and the
// sections, so a client can read or replace one without rewriting the rest.

// DocumentSection is one section: its heading's name as written, its body, and its line.
type DocumentSection = engine.DocumentSection

// DocumentError is a text the engine refused as a context document, in its words (with the
// line:column where the rule has one). Rule names it as the engine's document-error
// does: "empty", "too-large", "invalid-utf8", "control-character" or "noncharacter".
type DocumentError struct {
	Rule    string
	Message string
}

func (e *DocumentError) Error() string { return e.Message }

// ValidateDocument checks a document's bytes: non-empty, valid UTF-8, no control characters
// but tab and newline, no Unicode noncharacters, at most maxBytes.
func (e *Engine) ValidateDocument(ctx context.Context, text []byte, maxBytes uint32) error {
	wide := make([]uint32, len(text))
	for i, b := range text {
		wide[i] = uint32(b)
	}
	err, trap := call(ctx, e, func(i *engine.EngineGoInstance) error { return i.DocumentValidate(ctx, wide, maxBytes) })
	if trap != nil {
		return trap
	}
	if err != nil {
		rule, message := refusal(err)
		return &DocumentError{Rule: rule, Message: message}
	}
	return nil
}

// DocumentSections is the document's sections in order (text before the first heading has an
// empty name; headings inside fenced code do not count).
func (e *Engine) DocumentSections(ctx context.Context, text string) ([]DocumentSection, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) []DocumentSection { return i.DocumentSections(ctx, text) })
}

// GetDocumentSection is the body of section name (matched without regard to case); ok is false
// when the document has none.
func (e *Engine) GetDocumentSection(ctx context.Context, text, name string) (body string, ok bool, err error) {
	type found struct {
		body string
		err  error
	}
	r, err := call(ctx, e, func(i *engine.EngineGoInstance) found {
		body, err := i.DocumentGetSection(ctx, text, name)
		return found{body, err}
	})
	return r.body, err == nil && r.err == nil, err
}

// ReplaceDocumentSection is the document with section name's body replaced, every other byte
// as it was; a missing section is added (spec 004's in their order, any other at the end).
func (e *Engine) ReplaceDocumentSection(ctx context.Context, text, name, body string) (string, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) string { return i.DocumentReplaceSection(ctx, text, name, body) })
}

// DocumentTemplate is a new document with spec 004's eight sections.
func (e *Engine) DocumentTemplate(ctx context.Context) (string, error) {
	return call(ctx, e, func(i *engine.EngineGoInstance) string { return i.DocumentTemplate(ctx) })
}
