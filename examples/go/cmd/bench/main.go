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

	"workmem"
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

func main() {
	ctx := context.Background()
	start := time.Now()
	engine := must(workmem.New(ctx))
	empty := must(engine.EmptyState(ctx))
	cold := float64(time.Since(start).Microseconds()) / 1e3
	defer engine.Close(ctx)

	data := filepath.Join("..", "..", "host", "benches", "data")
	setup := string(must(os.ReadFile(filepath.Join(data, "setup.dsl"))))
	update := string(must(os.ReadFile(filepath.Join(data, "update-4k.dsl"))))
	const now = "2026-11-22T12:00:00Z"
	state := must(engine.Apply(ctx, empty, setup, now)).State

	apply := median(201, 20, func() { must(engine.Apply(ctx, state, update, now)) })
	roundtrip := median(201, 20, func() { must(engine.Merge(ctx, state, nil, now)) })
	call := median(201, 200, func() { must(engine.EmptyState(ctx)) })
	out, _ := json.Marshal(map[string]any{"runtime": "Go (Gravity, wazero)", "apply_us": apply, "roundtrip_us": roundtrip, "call_us": call, "cold_ms": cold})
	os.Stdout.Write(append(out, '\n'))
}
