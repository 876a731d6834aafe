// For examples/bench_runtimes.py: cold load + first call, then the median latencies of the
// 4 KB update through Gravity's bindings on wazero. Prints one JSON line.
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"sort"
	"time"

	workmem "github.com/workmem/workmem/packages/go"
)

func median(samples, batch int, f func()) float64 {
	for i := 0; i < batch*3; i++ {
		f()
	}
	times := make([]float64, samples)
	for s := range times {
		start := time.Now()
		for i := 0; i < batch; i++ {
			f()
		}
		times[s] = float64(time.Since(start).Nanoseconds()) / float64(batch) / 1e3
	}
	sort.Float64s(times)
	return times[samples/2]
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// medianEach times f once per sample, each on a fresh memory at the setup state (not timed).
func medianEach(ctx context.Context, engine *workmem.Engine, state string, samples int, f func(*workmem.Memory)) float64 {
	times := make([]float64, samples)
	for s := range times {
		memory := must(engine.LoadMemory(ctx, state))
		start := time.Now()
		f(memory)
		times[s] = float64(time.Since(start).Nanoseconds()) / 1e3
		memory.Close(ctx)
	}
	sort.Float64s(times)
	return times[samples/2]
}

func main() {
	ctx := context.Background()
	start := time.Now()
	engine := must(workmem.New(ctx))
	first := must(engine.NewMemory(ctx))
	must(first.Render(ctx))
	cold := float64(time.Since(start).Nanoseconds()) / 1e6

	data := filepath.Join("..", "..", "host", "bench", "benches", "data")
	setup := string(must(os.ReadFile(filepath.Join(data, "setup.dsl"))))
	update := string(must(os.ReadFile(filepath.Join(data, "update-4k.dsl"))))
	noop := "KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-999 because it does not exist\n"
	now := "2026-11-22T12:00:00Z"
	must(first.Apply(ctx, setup, now, workmem.Wants{}))
	state := must(first.Save(ctx))

	medianEach(ctx, engine, state, 50, func(m *workmem.Memory) { must(m.Apply(ctx, update, now, workmem.Wants{})) })
	apply := medianEach(ctx, engine, state, 201, func(m *workmem.Memory) { must(m.Apply(ctx, update, now, workmem.Wants{})) })
	noopApply := medianEach(ctx, engine, state, 201, func(m *workmem.Memory) { must(m.Apply(ctx, noop, now, workmem.Wants{})) })
	call := median(201, 200, func() { must(engine.OverviewTemplate(ctx)) })
	out, _ := json.Marshal(map[string]any{"runtime": "Go (Gravity, wazero)", "apply_us": apply, "noop_us": noopApply, "call_us": call, "cold_ms": cold})
	os.Stdout.Write(append(out, '\n'))
}
