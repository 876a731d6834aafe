package workmem

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	engine "github.com/workmem/workmem/packages/go/engine"
)

// CacheDir is where an Engine keeps its compiled component for the next process unless
// Options say otherwise: $WORKMEM_CACHE_DIR, else $XDG_CACHE_HOME/workmem, else
// ~/.cache/workmem, as the Rust host and the Python package have it. "" where there is no
// home to keep it in.
func CacheDir() string {
	if dir := os.Getenv("WORKMEM_CACHE_DIR"); dir != "" {
		return dir
	}
	if base := os.Getenv("XDG_CACHE_HOME"); base != "" {
		return filepath.Join(base, "workmem")
	}
	if home := os.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache", "workmem")
	}
	return ""
}

// compiled is the engine's core module compiled by wazero, from the compilation cache in dir
// where there is one ("" or an untrusted dir: compiled in this process only). wazero keys an
// artifact by the module's SHA-256 and the CPU's features, in a directory named for its own
// version, so another component or wazero never loads a stale one. An artifact wazero cannot
// read makes the compile fail, so the cache is cleared and the module compiled once more. The
// bool says whether the module came from the cache: wazero writes an artifact on every miss, so
// a compile that wrote none was a hit.
func compiled(ctx context.Context, dir string) (*engine.EngineGoFactory, wazero.CompilationCache, bool, error) {
	// A cache that is not there, cannot be trusted or cannot be made only costs the compile.
	uncached := func() (*engine.EngineGoFactory, wazero.CompilationCache, bool, error) {
		factory, err := engine.NewEngineGoFactory(ctx, wazero.NewRuntimeConfig())
		return factory, nil, false, err
	}
	if dir == "" || !trusted(dir) || !artifactsTrusted(dir) {
		return uncached()
	}
	for attempt := 0; ; attempt++ {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return uncached()
		}
		before := kept(dir)
		factory, err := engine.NewEngineGoFactory(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		if err == nil {
			return factory, cache, len(before) > 0 && maps.Equal(before, kept(dir)), nil
		}
		_ = cache.Close(ctx)
		if attempt == 1 {
			return nil, nil, false, err
		}
		clearArtifacts(dir)
	}
}

// trusted says whether path is ours and no one else may write it: an artifact is run as native
// code, so one another user could have placed (or a symlink to one) is never loaded. A
// directory not there yet is made private (0700) by wazero. Where a file's owner cannot be read
// (not a Unix system), nothing is trusted and the component is compiled in each process.
func trusted(path string) bool {
	info, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return true
	} else if err != nil {
		return false
	}
	return (info.IsDir() || info.Mode().IsRegular()) && ours(info) && info.Mode().Perm()&0o022 == 0
}

// artifactsTrusted checks wazero's version directories in dir and the artifacts in them.
func artifactsTrusted(dir string) bool {
	for _, versioned := range wazeroDirs(dir) {
		if !trusted(versioned) {
			return false
		}
		entries, err := os.ReadDir(versioned)
		if err != nil {
			return false
		}
		for _, entry := range entries {
			if !trusted(filepath.Join(versioned, entry.Name())) {
				return false
			}
		}
	}
	return true
}

// clearArtifacts removes the artifacts wazero keeps in dir (its version directories, which hold only
// what wazero wrote there).
func clearArtifacts(dir string) {
	for _, versioned := range wazeroDirs(dir) {
		_ = os.RemoveAll(versioned)
	}
}

// kept is each artifact under dir with the time it was written.
func kept(dir string) map[string]time.Time {
	found := map[string]time.Time{}
	for _, versioned := range wazeroDirs(dir) {
		entries, _ := os.ReadDir(versioned)
		for _, entry := range entries {
			if info, err := entry.Info(); err == nil {
				found[filepath.Join(versioned, entry.Name())] = info.ModTime()
			}
		}
	}
	return found
}

func wazeroDirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, entry := range entries {
		if strings.HasPrefix(entry.Name(), "wazero-") {
			dirs = append(dirs, filepath.Join(dir, entry.Name()))
		}
	}
	return dirs
}
