package workmem

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// artifacts lists the files wazero keeps under dir.
func artifacts(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// oneArtifact is the one artifact wazero keeps under dir.
func oneArtifact(t *testing.T, dir string) []string {
	t.Helper()
	kept := artifacts(t, dir)
	if len(kept) != 1 {
		t.Fatalf("want one artifact, found %v", kept)
	}
	return kept
}

// renders makes an engine with o (MaxMemoryBytes left 0: the default) and uses it once; it says whether the engine came from the
// cache.
func renders(t *testing.T, o Options) bool {
	t.Helper()
	ctx := context.Background()
	e, err := NewWithOptions(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	m, err := e.NewMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if _, err := m.Render(ctx); err != nil {
		t.Fatal(err)
	}
	return e.FromCache()
}

func TestTheCompiledComponentIsKeptAndLoadedByTheNextEngine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if renders(t, Options{CompileCacheDir: dir}) {
		t.Fatal("an empty cache gave a compiled component")
	}
	kept := oneArtifact(t, dir)
	before, err := os.Stat(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 {
		t.Fatalf("the cache directory is %v, want 0700", info.Mode().Perm())
	}
	if !renders(t, Options{CompileCacheDir: dir}) {
		t.Fatal("the second engine compiled again instead of loading the artifact")
	}
	after, err := os.Stat(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the artifact was written again")
	}
}

func TestACorruptArtifactIsCompiledOverAndReplaced(t *testing.T) {
	dir := t.TempDir()
	renders(t, Options{CompileCacheDir: dir})
	kept := oneArtifact(t, dir)
	if err := os.WriteFile(kept[0], []byte("not an artifact"), 0o600); err != nil {
		t.Fatal(err)
	}
	if renders(t, Options{CompileCacheDir: dir}) {
		t.Fatal("a corrupt artifact counted as a hit")
	}
	if !renders(t, Options{CompileCacheDir: dir}) {
		t.Fatal("the replaced artifact is not loaded")
	}
	data, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:6]) != "WAZEVO" {
		t.Fatalf("the corrupt artifact was not replaced: %q", data[:min(len(data), 16)])
	}
}

func TestAnArtifactAnotherUserCouldHavePlacedIsNeverLoaded(t *testing.T) {
	// A directory others may write.
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	renders(t, Options{CompileCacheDir: shared})
	if kept := artifacts(t, shared); len(kept) != 0 {
		t.Fatalf("a shared directory was written: %v", kept)
	}
	// In the artifact's place, one others may write, and a symlink. Each is garbage: had the
	// cache read it, the compile would have failed and the artifact been replaced.
	for _, plant := range []func(path string) error{
		func(path string) error {
			if err := os.WriteFile(path, []byte("planted"), 0o600); err != nil {
				return err
			}
			return os.Chmod(path, 0o666)
		},
		func(path string) error {
			elsewhere := filepath.Join(t.TempDir(), "artifact")
			if err := os.WriteFile(elsewhere, []byte("planted"), 0o600); err != nil {
				return err
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.Symlink(elsewhere, path)
		},
	} {
		dir := t.TempDir()
		renders(t, Options{CompileCacheDir: dir})
		kept := oneArtifact(t, dir)
		if err := plant(kept[0]); err != nil {
			t.Fatal(err)
		}
		planted, err := os.Lstat(kept[0])
		if err != nil {
			t.Fatal(err)
		}
		if renders(t, Options{CompileCacheDir: dir}) {
			t.Fatal("a planted artifact was loaded")
		}
		now, err := os.Lstat(kept[0])
		if err != nil {
			t.Fatal(err)
		}
		// Not read and not compiled over either: the engine compiled for itself alone.
		if !os.SameFile(planted, now) {
			t.Fatal("the planted artifact was replaced, so the cache read it")
		}
	}
}

func TestNoCompileCacheKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	renders(t, Options{CompileCacheDir: dir, NoCompileCache: true})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("NoCompileCache wrote %v", entries)
	}
}

// Bytes changed where wazero reads counts and offsets (its header) and in the code: before the
// sums, a changed function count made the next start allocate until it ran out of memory.
func TestADamagedArtifactIsCompiledOverNotRun(t *testing.T) {
	dir := t.TempDir()
	renders(t, Options{CompileCacheDir: dir})
	kept := oneArtifact(t, dir)
	good, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{7, 12, len(good) / 2, len(good) - 1} {
		damaged := append([]byte(nil), good...)
		damaged[at] ^= 0x5a
		if err := os.WriteFile(kept[0], damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		if renders(t, Options{CompileCacheDir: dir}) {
			t.Fatalf("an artifact damaged at byte %d counted as a hit", at)
		}
		if again, _ := os.ReadFile(kept[0]); string(again) != string(good) {
			t.Fatalf("the artifact damaged at byte %d was not replaced", at)
		}
		if !renders(t, Options{CompileCacheDir: dir}) {
			t.Fatal("the replaced artifact is not loaded")
		}
	}
}

// A cache whose path another user could re-point (a parent others may write, without the
// sticky bit; a symlink in the path) is not used: wazero opens artifacts by path.
func TestACacheBeneathADirectoryOthersControlIsNotUsed(t *testing.T) {
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(open, "cache")
	renders(t, Options{CompileCacheDir: dir})
	if kept := artifacts(t, dir); len(kept) != 0 {
		t.Fatalf("a cache beneath a directory others may write was used: %v", kept)
	}
	if err := os.Chmod(open, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	renders(t, Options{CompileCacheDir: dir})
	if kept := artifacts(t, dir); len(kept) != 1 {
		t.Fatalf("with the sticky bit (as /tmp has it) the cache is used: %v", kept)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if renders(t, Options{CompileCacheDir: link}) {
		t.Fatal("a cache reached through a symlink was used")
	}
}
