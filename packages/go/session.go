package workmem

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// SessionFormat is what meta.json's "format" says of a session directory this version reads.
const SessionFormat = "workmem-session/1"

const (
	metaFile     = "meta.json"
	stateFile    = "state.json"
	logFile      = "updates.jsonl"
	lockFile     = ".lock"
	holderFile   = ".lock.holder"
	pendingFile  = "commit.pending.json"
	memoryDir    = "working-memory"
	overviewFile = "working-memory/overview.md"
)

// SessionMeta is meta.json, in the order and shape the CLI writes it.
type SessionMeta struct {
	Format             string `json:"format"`
	ID                 string `json:"id"`
	Cwd                string `json:"cwd"`
	CreatedAt          string `json:"created_at"`
	UpdatedAt          string `json:"updated_at"`
	Updates            uint64 `json:"updates"`
	WorkmemVersion     string `json:"workmem_version"`
	Rounds             uint64 `json:"rounds"`
	MemoryUpdatedRound uint64 `json:"memory_updated_round"`
	TokenCorrection    int64  `json:"token_correction"`
}

// pendingCommit is commit.pending.json: a commit written whole before its steps.
type pendingCommit struct {
	Seq      uint32 `json:"seq"`
	LogEntry string `json:"log_entry"`
	State    string `json:"state"`
	Overview string `json:"overview"`
}

// SessionError is a session directory that cannot be read or committed.
type SessionError struct{ Message string }

func (e *SessionError) Error() string { return e.Message }

// Session is a session directory the CLI (or any runtime) made: the same files, read and
// committed as the CLI does (docs/architecture.md, "One commit path"). Every file is reached through an
// os.Root on the directory, so no name, symlink included, leads outside it; commits run under
// the CLI's lock (flock on .lock), each whole-file write is a temp file renamed into place,
// and a commit is written whole to commit.pending.json first, so that a crash at any moment
// leaves a session that loads (the next lock holder, in any runtime, finishes it).
type Session struct {
	Dir  string
	root *os.Root
}

// OpenSession opens the session at dir; its meta.json must carry SessionFormat.
func OpenSession(dir string) (*Session, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &SessionError{fmt.Sprintf("%s is not a session directory: %v", dir, err)}
	}
	s := &Session{dir, root}
	meta, err := s.Meta()
	if err == nil && meta.Format != SessionFormat {
		err = fmt.Errorf("meta.json's format is %q, not %q", meta.Format, SessionFormat)
	}
	if err != nil {
		_ = root.Close()
		return nil, &SessionError{fmt.Sprintf("%s is not a session: %v", dir, err)}
	}
	return s, nil
}

// Close releases the directory handle.
func (s *Session) Close() error { return s.root.Close() }

// Meta is meta.json: format, id, cwd, times, the update count and the agent's round counters.
func (s *Session) Meta() (SessionMeta, error) {
	var meta SessionMeta
	data, err := s.read(metaFile)
	if err == nil {
		if err = json.Unmarshal(data, &meta); err != nil {
			err = fmt.Errorf("%s/%s does not parse: %w", s.Dir, metaFile, err)
		}
	}
	return meta, err
}

// Overview is working-memory/overview.md, what gets injected into the prompt.
func (s *Session) Overview() (string, error) {
	data, err := s.read(overviewFile)
	return string(data), err
}

// LoadMemory is the session's memory in e (a new one before the first update). A commit a
// crash interrupted is finished first; a state.json missing after committed updates is an
// error, never a silent fresh start.
func (s *Session) LoadMemory(ctx context.Context, e *Engine) (*Memory, error) {
	var m *Memory
	err := s.locked(func() (err error) { m, err = s.load(ctx, e); return err })
	return m, err
}

// Apply loads the memory, applies text at now (an *InvalidError, changing nothing, when it
// has errors) and commits it, all under the session's lock: what `workmem apply` does.
// There is nothing to Commit after it.
func (s *Session) Apply(ctx context.Context, e *Engine, text, now string) (applied Applied, err error) {
	err = s.locked(func() error {
		m, err := s.load(ctx, e)
		if err != nil {
			return err
		}
		defer m.Close(ctx)
		if applied, err = m.Apply(ctx, text, now, Wants{Overview: true, State: true}); err != nil {
			return err
		}
		return s.commit(applied)
	})
	return applied, err
}

// Commit commits an update applied to a memory LoadMemory gave (asked with Overview and
// State, as Memory.Update does): the way to see an update before it lands. It is refused,
// changing nothing, when another writer committed since (load the memory again and redo the
// update), or when it is already committed.
func (s *Session) Commit(applied Applied) error {
	return s.locked(func() error {
		last, err := s.lastSeq(false)
		if err != nil {
			return err
		}
		if applied.Seq != last+1 {
			if state, err := s.read(stateFile); err == nil && applied.Seq == last && string(state) == applied.State {
				return &SessionError{fmt.Sprintf("update %d is already committed: Apply commits what it applies; Commit is for an update applied to a memory from LoadMemory", applied.Seq)}
			}
			return &SessionError{fmt.Sprintf("update %d does not follow the session's last update, %d: another writer committed since the memory was loaded; load it again", applied.Seq, last)}
		}
		return s.commit(applied)
	})
}

func (s *Session) load(ctx context.Context, e *Engine) (*Memory, error) {
	state, err := s.read(stateFile)
	if errors.Is(err, fs.ErrNotExist) {
		updates, err := s.lastSeq(false)
		if err != nil {
			return nil, err
		}
		if updates > 0 {
			return nil, &SessionError{fmt.Sprintf("%s: state.json is missing although %d updates were committed", s.Dir, updates)}
		}
		return e.NewMemory(ctx)
	}
	if err != nil {
		return nil, err
	}
	return e.LoadMemory(ctx, string(state))
}

func (s *Session) commit(applied Applied) error {
	if applied.State == "" || applied.Overview == "" {
		return &SessionError{"a commit needs an update applied with Wants{Overview: true, State: true}"}
	}
	// What could refuse a step (a meta.json that does not parse, a working-memory/ that is
	// not a folder inside the session) refuses the commit before anything is written.
	if _, err := s.Meta(); err != nil {
		return err
	}
	if err := s.root.Mkdir(memoryDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return s.fail(memoryDir, err)
	}
	if info, err := s.root.Stat(memoryDir); err != nil || !info.IsDir() {
		return s.fail(memoryDir, fmt.Errorf("is not a folder: %v", err))
	}
	c := pendingCommit{applied.Seq, applied.LogEntry, applied.State, applied.Overview}
	data, err := pretty(c)
	if err != nil {
		return err
	}
	if err := s.write(pendingFile, data); err != nil {
		return err
	}
	return s.finish(c)
}

// finish carries out a commit's steps, each safe to repeat.
func (s *Session) finish(c pendingCommit) error {
	last, err := s.lastSeq(true)
	if err != nil {
		return err
	}
	if last < c.Seq {
		f, err := s.open(logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return err
		}
		_, err = f.Write([]byte(c.LogEntry + "\n"))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return s.fail(logFile, err)
		}
	}
	if err := s.write(stateFile, []byte(c.State)); err != nil {
		return err
	}
	if err := s.write(overviewFile, []byte(c.Overview)); err != nil {
		return err
	}
	meta, err := s.Meta()
	if err != nil {
		return err
	}
	if meta.Updates != uint64(c.Seq) {
		meta.UpdatedAt, meta.Updates, meta.MemoryUpdatedRound = Now(), uint64(c.Seq), meta.Rounds
		data, err := pretty(meta)
		if err != nil {
			return err
		}
		if err := s.write(metaFile, data); err != nil {
			return err
		}
	}
	if err := s.root.Remove(pendingFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.fail(pendingFile, err)
	}
	return s.syncDir(".")
}

// locked runs f holding the session's lock, after finishing a commit a crash interrupted.
func (s *Session) locked(f func() error) error {
	lock, err := s.open(lockFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	defer lock.Close()
	deadline := time.Now().Add(LockWait)
	for {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return s.fail(lockFile, err)
		}
		if time.Now().After(deadline) {
			return &SessionError{fmt.Sprintf("session %s is busy: waited %v for its lock, which another process holds with flock on %s (a workmem writer in Rust, Python or Go)", s.Dir, LockWait, lockFile)}
		}
		time.Sleep(poll)
	}
	if err := s.claim(deadline); err != nil {
		return err
	}
	// Not synced: a holder file a crash brings back names a dead process, and is broken.
	defer s.root.Remove(holderFile)
	switch data, err := s.read(pendingFile); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		var c pendingCommit
		if err := json.Unmarshal(data, &c); err != nil {
			return s.fail(pendingFile, fmt.Errorf("does not parse: %w", err))
		}
		if err := s.finish(c); err != nil {
			return err
		}
	}
	return f()
}

// The lock's protocol and its timings are host/store/src/holder.rs's: how long a holder file may
// stay empty before it counts as a crash's, a break may take before its breaker counts as gone,
// and how often a waiting writer looks again.
const (
	breakFile  = ".lock.holder.break"
	emptyStale = 2 * time.Second
	breakStale = 2 * time.Second
	poll       = 5 * time.Millisecond
)

// LockWait is the longest a writer waits for a session's lock; past it the write fails with a
// SessionError that says what held the lock.
const LockWait = 60 * time.Second

// claim takes .lock.holder, the half of the lock that Node's writer (which has no file locks)
// takes too (host/store/src/holder.rs says how), this process holding the flock, waiting while
// a live process holds it, until deadline; one whose writer is provably gone is broken, one
// writer at a time.
func (s *Session) claim(deadline time.Time) error {
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	start := ""
	if at, ok := started(os.Getpid()); ok {
		start = "@" + at
	}
	claim := fmt.Sprintf("%d %x%s flock\n", os.Getpid(), nonce, start)
	// Taken whole: the words go to a spare file first, made once, which each try links as the
	// holder file (refused where it is taken), so no writer ever sees one empty or half written.
	spare := fmt.Sprintf(".%s.tmp-%d-%d", holderFile, os.Getpid(), tempCounter.Add(1))
	f, err := s.root.OpenFile(spare, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return s.fail(holderFile, err)
	}
	_, err = f.WriteString(claim)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	defer s.root.Remove(spare)
	if err != nil {
		return s.fail(holderFile, err)
	}
	for {
		err := s.root.Link(spare, holderFile)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return s.fail(holderFile, err)
		}
		seen, err := s.look(holderFile)
		if err != nil {
			return err
		}
		if seen == nil {
			continue
		}
		if seen.gone() {
			if err := s.breakHolder(seen); err != nil {
				return err
			}
			continue
		}
		if time.Now().After(deadline) {
			return &SessionError{fmt.Sprintf("session %s is busy: waited %v for its lock, which %s", s.Dir, LockWait, seen.describe())}
		}
		time.Sleep(poll)
	}
}

// seen is a holder file as one open of it saw it.
type seen struct {
	text              []byte
	inode             uint64
	modified, changed time.Duration
}

// look is name (the holder file or its break link) as it is now; nil where it is not there.
// Anything but a regular file is no holder any writer makes: refused at once.
func (s *Session) look(name string) (*seen, error) {
	f, err := s.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, s.fail(name, fmt.Errorf("%w: no workmem writer made it; remove it", err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, s.fail(name, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.Mode().IsRegular() || !ok {
		return nil, s.fail(name, errors.New("is not a regular file (a symlink, a FIFO or a folder), so no workmem writer made it; remove it"))
	}
	text := make([]byte, 256)
	n, err := f.Read(text)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, s.fail(name, err)
	}
	return &seen{text[:n], st.Ino, time.Since(info.ModTime()), time.Since(time.Unix(st.Ctim.Sec, st.Ctim.Nsec))}, nil
}

// gone says whether the holder file's writer is provably gone, as a writer holding the flock sees it.
func (h *seen) gone() bool {
	words := bytes.Fields(h.text)
	if len(words) == 0 {
		return h.modified > emptyStale
	}
	if len(words) > 2 && string(words[2]) == "flock" {
		return true
	}
	pid, err := strconv.Atoi(string(words[0]))
	if err != nil || pid <= 0 || pid > 1<<31-1 {
		return true
	}
	// EPERM: alive, someone else's.
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	if len(words) < 2 {
		return false
	}
	_, said, ok := bytes.Cut(words[1], []byte("@"))
	now, known := started(pid)
	return ok && known && string(said) != now
}

// describe says what holds the lock, for the error of a wait that ran out.
func (h *seen) describe() string {
	pid := "none"
	if words := bytes.Fields(h.text); len(words) > 0 {
		pid = string(words[0][:min(len(words[0]), 20)])
	}
	return fmt.Sprintf("process %s, alive, has held its holder file (%s) for %d s; if no workmem writer runs as %s, remove %s", pid, holderFile, int(h.changed.Seconds()), pid, holderFile)
}

// breakHolder breaks the holder file judged a crash's, unless another writer is breaking one:
// it is linked as the break link first, and removed only if that link is the very file judged.
func (s *Session) breakHolder(judged *seen) error {
	switch err := s.root.Link(holderFile, breakFile); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, fs.ErrExist):
		other, lerr := s.look(breakFile)
		if lerr != nil {
			return lerr
		}
		if other != nil && other.changed > breakStale {
			_ = s.root.Remove(breakFile)
		}
		time.Sleep(poll)
		return nil
	case err != nil:
		return s.fail(breakFile, err)
	}
	defer s.root.Remove(breakFile)
	same := func(h *seen) bool { return h != nil && h.inode == judged.inode && bytes.Equal(h.text, judged.text) }
	linked, err := s.look(breakFile)
	if err != nil {
		return err
	}
	held, err := s.look(holderFile)
	if err != nil {
		return err
	}
	if same(linked) && same(held) {
		_ = s.root.Remove(holderFile)
	}
	return nil
}

// started is when process pid started, in clock ticks after boot (/proc/<pid>/stat's 22nd
// field): with the pid it names one process, where a pid alone is reused (a restarted
// container's PID 1). false where /proc does not tell.
func started(pid int) (string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 20 {
		return "", false
	}
	return string(fields[19]), true
}

// lastSeq is the seq of the update log's last whole record (0 for none). A record a crash cut
// short (no newline yet) was never committed: with truncate it is dropped first.
func (s *Session) lastSeq(truncate bool) (uint32, error) {
	flag := os.O_RDONLY
	if truncate {
		flag = os.O_RDWR
	}
	f, err := s.open(logFile, flag)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, s.fail(logFile, err)
	}
	size := info.Size()
	// Backwards from the end, a chunk at a time, so a long log costs what its last line does.
	var start, end int64
	var body []byte
	for chunk := int64(8192); ; chunk *= 4 {
		start = max(0, size-chunk)
		tail := make([]byte, size-start)
		if _, err := f.ReadAt(tail, start); err != nil && err != io.EOF {
			return 0, s.fail(logFile, err)
		}
		end = int64(bytes.LastIndexByte(tail, '\n') + 1)
		body = bytes.TrimRight(tail[:end], " \t\r\n")
		if bytes.IndexByte(body, '\n') >= 0 || start == 0 {
			break
		}
	}
	if truncate && start+end < size {
		if err := f.Truncate(start + end); err != nil {
			return 0, s.fail(logFile, err)
		}
		if err := f.Sync(); err != nil {
			return 0, s.fail(logFile, err)
		}
	}
	last := bytes.TrimSpace(body[bytes.LastIndexByte(body, '\n')+1:])
	if len(last) == 0 {
		return 0, nil
	}
	var record struct {
		Seq uint32 `json:"seq"`
	}
	if err := json.Unmarshal(last, &record); err != nil {
		return 0, s.fail(logFile, fmt.Errorf("its last record does not parse: %w", err))
	}
	return record.Seq, nil
}

// open opens name beneath the session, refusing anything but a regular file (O_NONBLOCK, so
// that a FIFO in a file's place cannot hang the open).
func (s *Session) open(name string, flag int) (*os.File, error) {
	f, err := s.root.OpenFile(name, flag|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, s.fail(name, err)
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, s.fail(name, errors.New("is not a regular file"))
	}
	return f, nil
}

func (s *Session) read(name string) ([]byte, error) {
	f, err := s.open(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, s.fail(name, err)
	}
	return data, nil
}

var tempCounter atomic.Uint64

// write replaces name atomically: a temp file named as the CLI names its own (so that a lock
// holder in any runtime sweeps it after a crash), synced and renamed into place.
func (s *Session) write(name string, data []byte) error {
	dir, base := ".", name
	if i := bytes.LastIndexByte([]byte(name), '/'); i >= 0 {
		dir, base = name[:i], name[i+1:]
	}
	tmp := fmt.Sprintf("%s/.%s.tmp-%d-%d", dir, base, os.Getpid(), tempCounter.Add(1))
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return s.fail(name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Rename(tmp, name)
	}
	if err != nil {
		_ = s.root.Remove(tmp)
		return s.fail(name, err)
	}
	return s.syncDir(dir)
}

func (s *Session) syncDir(name string) error {
	d, err := s.root.Open(name)
	if err != nil {
		return s.fail(name, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return s.fail(name, err)
	}
	return nil
}

func (s *Session) fail(name string, err error) error {
	return &SessionError{fmt.Sprintf("%s/%s: %v", s.Dir, name, err)}
}

// pretty is JSON as the CLI writes its session files (serde_json's pretty form) and a newline.
func pretty(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}
