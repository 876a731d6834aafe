// An agent's memory-update step with workmem, driven from Go: the engine says what to ask,
// this program asks the model, and the engine applies the answer or asks again with the
// diagnostics. The "model" replays examples/responses/ (a malformed answer, then good ones);
// swap ask for your client's call.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	workmem "github.com/workmem/workmem/packages/go"
)

func main() {
	ctx := context.Background()
	engine, err := workmem.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close(ctx)

	var answers []string
	for _, name := range []string{"02-malformed.dsl", "01-start.dsl", "03-progress.dsl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "responses", name))
		if err != nil {
			log.Fatal(err)
		}
		answers = append(answers, string(b))
	}
	ask := func(_ context.Context, messages []workmem.Message) (string, error) {
		fmt.Printf("model <- %d messages\n", len(messages))
		answer := answers[0]
		answers = answers[1:]
		return answer, nil
	}

	memory, err := engine.NewMemory(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, task := range []string{"Fix Quantity.to() for composite units", "Keep going: fix it and test it"} {
		updated, err := memory.Update(ctx, task, ask, 2)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("applied after %d call(s):\n%s\n", updated.Attempts, updated.Diff)
	}
	overview, _ := memory.Render(ctx)
	fmt.Print(overview)
}
