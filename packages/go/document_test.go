package workmem

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDocumentConformance runs tests/data/document/ and must say what every other runtime says.
func TestDocumentConformance(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	dir := filepath.Join(tests, "data", "document")
	var cases struct {
		Limit     uint32
		Validate  []struct{ Text, Hex *string }
		Documents []string
		Replace   []struct {
			Document   int
			Name, Body string
		}
	}
	var expected struct {
		Validate []*[2]string
		Sections [][][2]any
		Replace  []string
	}
	for name, into := range map[string]any{"cases.json": &cases, "expected.json": &expected} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	for n, c := range cases.Validate {
		var bytes []byte
		if c.Text != nil {
			bytes = []byte(*c.Text)
		} else {
			bytes, _ = hex.DecodeString(*c.Hex)
		}
		err := e.ValidateDocument(ctx, bytes, cases.Limit)
		var refused *DocumentError
		switch want := expected.Validate[n]; {
		case want == nil && err != nil:
			t.Errorf("validate %d: %v, want valid", n, err)
		case want != nil && (!errors.As(err, &refused) || [2]string{refused.Rule, refused.Message} != *want):
			t.Errorf("validate %d: %#v, want %q", n, err, *want)
		}
	}
	for n, doc := range cases.Documents {
		sections, err := e.DocumentSections(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		got := [][2]any{}
		for _, s := range sections {
			got = append(got, [2]any{s.Name, float64(s.Line)})
		}
		if want := expected.Sections[n]; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("sections of document %d: %v, want %v", n, got, want)
		}
	}
	for n, r := range cases.Replace {
		got, err := e.ReplaceDocumentSection(ctx, cases.Documents[r.Document], r.Name, r.Body)
		if err != nil || got != expected.Replace[n] {
			t.Errorf("replace %d: %q %v, want %q", n, got, err, expected.Replace[n])
		}
	}
	if body, ok, err := e.GetDocumentSection(ctx, cases.Documents[0], "facts"); err != nil || !ok || body != "- CEO = Bob\n" {
		t.Errorf("section facts: %q %v %v", body, ok, err)
	}
	if _, ok, err := e.GetDocumentSection(ctx, cases.Documents[0], "Timeline"); err != nil || ok {
		t.Errorf("a missing section: %v %v", ok, err)
	}
}
