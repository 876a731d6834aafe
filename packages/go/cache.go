package workmem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
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
// version, so another component or wazero never loads a stale one. wazero trusts what it reads
// (a count changed in an artifact made it allocate without bound), so each artifact's SHA-256 is
// kept beside it as it is written, and one that no longer matches, or that wazero cannot read,
// is cleared and the module compiled once more. The bool says whether the module came from the
// cache: wazero writes an artifact on every miss, so a compile that wrote none was a hit.
func compiled(ctx context.Context, dir string) (*engine.EngineGoFactory, wazero.CompilationCache, bool, error) {
	// A cache that is not there, cannot be trusted or cannot be made only costs the compile.
	uncached := func() (*engine.EngineGoFactory, wazero.CompilationCache, bool, error) {
		factory, err := engine.NewEngineGoFactory(ctx, wazero.NewRuntimeConfig())
		return factory, nil, false, err
	}
	root, ok := cacheRoot(dir)
	if !ok || !artifactsTrusted(root) {
		return uncached()
	}
	if !artifactsIntact(root) {
		clearArtifacts(root)
	}
	for attempt := 0; ; attempt++ {
		cache, err := wazero.NewCompilationCacheWithDir(root)
		if err != nil {
			return uncached()
		}
		before := kept(root)
		factory, err := engine.NewEngineGoFactory(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		if err == nil {
			after := kept(root)
			hit := len(before) > 0 && maps.Equal(before, after)
			if !hit {
				// The cache is an optimization: sums not written only cost the next start a compile.
				_ = writeSums(root, after)
			}
			return factory, cache, hit, nil
		}
		_ = cache.Close(ctx)
		if attempt == 1 {
			return nil, nil, false, err
		}
		clearArtifacts(root)
	}
}

// cacheRoot is dir, made private (0700) where it is not there yet, as an absolute path with no
// symlinks, if it is ours and no one else may write it and neither may anyone re-point the path
// to it: every directory above it is root's or ours, and one that others may write has its
// sticky bit (so no one else may rename or remove what is ours in it). wazero opens its
// artifacts by path, so a parent another user controls would let them choose the native code
// this process runs. Where a file's owner cannot be read (not a Unix system), nothing is
// trusted and the component is compiled in each process.
func cacheRoot(dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if _, err := os.Lstat(abs); os.IsNotExist(err) {
		if os.MkdirAll(filepath.Dir(abs), 0o755) != nil {
			return "", false
		}
		if err := os.Mkdir(abs, 0o700); err != nil && !os.IsExist(err) {
			return "", false
		}
	}
	info, err := os.Lstat(abs)
	if err != nil || !info.IsDir() || !ours(info) || info.Mode().Perm()&0o022 != 0 {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || real != abs {
		return "", false
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		above, err := os.Lstat(p)
		if err != nil || !above.IsDir() || !(ours(above) || ownedByRoot(above)) {
			return "", false
		}
		if above.Mode().Perm()&0o022 != 0 && above.Mode()&os.ModeSticky == 0 {
			return "", false
		}
		if p == filepath.Dir(p) {
			return real, true
		}
	}
}

// trusted says whether path is ours and no one else may write it: an artifact is run as native
// code, so one another user could have placed (or a symlink to one) is never loaded.
func trusted(path string) bool {
	info, err := os.Lstat(path)
	if err != nil {
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

// sumsFile keeps the SHA-256 of each artifact under a cache directory, one "path hex" a line,
// the path relative to the directory.
const sumsFile = "workmem-go.sums"

// artifactsIntact says whether every artifact under dir is the one its sum was taken of.
func artifactsIntact(dir string) bool {
	found := kept(dir)
	if len(found) == 0 {
		return true
	}
	path := filepath.Join(dir, sumsFile)
	if !trusted(path) {
		return false
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sums := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if name, sum, ok := strings.Cut(line, " "); ok {
			sums[name] = sum
		}
	}
	for artifact := range found {
		rel, _ := filepath.Rel(dir, artifact)
		if sum, ok := sums[rel]; !ok || sum != sha256Of(artifact) {
			return false
		}
	}
	return true
}

// writeSums writes the sums of artifacts whole: through a fresh name (O_EXCL), synced, renamed.
func writeSums(dir string, artifacts map[string]time.Time) error {
	var text strings.Builder
	for artifact := range artifacts {
		rel, _ := filepath.Rel(dir, artifact)
		text.WriteString(rel + " " + sha256Of(artifact) + "\n")
	}
	tmp, err := os.CreateTemp(dir, "."+sumsFile+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, sumsFile))
}

// sha256Of is the hex SHA-256 of the file at path ("" where it cannot be read).
func sha256Of(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
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
