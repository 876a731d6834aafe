// Process start to first Apply, cold (nothing cached: wazero compiles the component) and warm
// (the compiled component loaded from the compilation cache), in one run: `make bench-start`.
// Each sample is a new process, this program run again with -child, that makes an Engine and
// applies one update; the median of each and their ratio are printed as one JSON line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	workmem "github.com/workmem/workmem/packages/go"
)

const samples = 7

const update = "KEY_LEARNINGS:\n  ADD:\n    - because it starts: the first apply\n"

// firstApply is what each child process does: the cold start of a Go program using workmem.
func firstApply(cache string, hit bool) {
	ctx := context.Background()
	options := workmem.Options{MaxMemoryBytes: workmem.DefaultMaxMemoryBytes, CompileCacheDir: cache, NoCompileCache: cache == ""}
	engine, err := workmem.NewWithOptions(ctx, options)
	if err != nil {
		log.Fatal(err)
	}
	memory, err := engine.NewMemory(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := memory.Apply(ctx, update, workmem.Now(), workmem.Wants{}); err != nil {
		log.Fatal(err)
	}
	if hit && !engine.FromCache() {
		log.Fatal("the warm sample compiled the component: the cache was not used")
	}
}

func sample(self string, args ...string) float64 {
	start := time.Now()
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatal(err)
	}
	return float64(time.Since(start).Microseconds()) / 1e3
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func main() {
	child := flag.Bool("child", false, "make an engine and apply once (a sample)")
	cache := flag.String("cache", "", "the compile cache for -child; none when empty")
	hit := flag.Bool("hit", false, "fail unless -child loads the component from -cache")
	bareRun := flag.Bool("bare", false, "exit at once (the process alone, a sample)")
	flag.Parse()
	if *bareRun {
		return
	}
	if *child {
		firstApply(*cache, *hit)
		return
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "workmem-bench-start-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	warmDir := filepath.Join(tmp, "warm")
	fill := exec.Command(self, "-child", "-cache", warmDir)
	fill.Stderr = os.Stderr
	if err := fill.Run(); err != nil {
		log.Fatal(err)
	}
	var cold, warm, bare []float64
	for range samples {
		cold = append(cold, sample(self, "-child"))
	}
	for range samples {
		warm = append(warm, sample(self, "-child", "-cache", warmDir, "-hit"))
	}
	for range samples {
		bare = append(bare, sample(self, "-bare"))
	}
	c, w, b := median(cold), median(warm), median(bare)
	round := func(x float64) float64 { return float64(int(x*10+0.5)) / 10 }
	out, _ := json.Marshal(map[string]any{
		"runtime": "Go (Gravity, wazero)", "cold_ms": round(c), "warm_ms": round(w), "process_only_ms": round(b),
		"cold_over_warm": float64(int(c/w*100+0.5)) / 100, "target_ms": 50, "met": w <= 50,
	})
	os.Stdout.Write(append(out, '\n'))
}
