// A user's program with the Go module: open a session the CLI made, apply an update, assemble
// the next request.
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"

	workmem "github.com/workmem/workmem/packages/go"
)

func main() {
	ctx := context.Background()
	engine, err := workmem.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close(ctx)
	session, err := workmem.OpenSession(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	update, err := os.ReadFile(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	applied, err := session.Apply(ctx, engine, string(update), workmem.Now())
	if err != nil {
		log.Fatal(err)
	}
	overview, err := session.Overview()
	if err != nil {
		log.Fatal(err)
	}
	messages, err := engine.Assemble(ctx, workmem.ContextRequest{
		SystemPrompt: "You are a careful engineer.", Overview: overview,
		History: []workmem.ChatMessage{{Role: "user", Content: "Go on."}},
	})
	if err != nil {
		log.Fatal(err)
	}
	meta, err := engine.ContextMeta(ctx, workmem.ContextStats{TokensUsed: 1000, TokensMax: 128000})
	if err != nil {
		log.Fatal(err)
	}
	messages = append(messages, workmem.ChatMessage{Role: "system", Content: meta})
	out, _ := json.Marshal(map[string]any{"runtime": "go", "seq": applied.Seq, "added": applied.Added, "messages": len(messages), "overview": messages[1].Content})
	os.Stdout.Write(append(out, '\n'))
}
