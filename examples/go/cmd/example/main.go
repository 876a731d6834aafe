// An agent's memory-update step with workmem: build the prompt, ask the model, apply its
// answer, and re-prompt with the diagnostics when it is malformed. The "model" replays the
// sample responses in examples/responses/, one per call.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"workmem"
)

func main() {
	ctx := context.Background()
	engine, err := workmem.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close(ctx)

	answers, _ := filepath.Glob(filepath.Join("..", "responses", "*.dsl"))
	sort.Strings(answers)
	turn := 0
	model := func(prompt string) string {
		name := answers[turn%len(answers)]
		turn++
		fmt.Printf("model <- %d characters of prompt; model -> %s\n", len(prompt), filepath.Base(name))
		text, err := os.ReadFile(name)
		if err != nil {
			log.Fatal(err)
		}
		return string(text)
	}

	state, err := engine.EmptyState(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, task := range []string{"Fix Quantity.to() for composite units", "Keep going: fix it and test it"} {
		prompt, _ := engine.UpdatePrompt(ctx, state, task)
		for attempt := 0; attempt < 3; attempt++ {
			result, err := engine.Apply(ctx, state, model(prompt), workmem.Now())
			var bad *workmem.InvalidError
			if errors.As(err, &bad) {
				var lines []string
				for _, d := range bad.Diagnostics {
					lines = append(lines, fmt.Sprintf("line %d, column %d: %s", d.Line, d.Column, d.Message))
				}
				fmt.Printf("rejected, asking again:\n%s\n\n", strings.Join(lines, "\n"))
				base, _ := engine.UpdatePrompt(ctx, state, task)
				prompt = base + "\n\nYour previous answer had these errors; answer again:\n" + strings.Join(lines, "\n") + "\n"
				continue
			}
			if err != nil {
				log.Fatal(err)
			}
			state = result.State
			fmt.Println(result.Diff)
			break
		}
	}
	overview, _ := engine.Render(ctx, state)
	fmt.Print(overview)
}
