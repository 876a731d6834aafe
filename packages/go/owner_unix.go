//go:build unix

package workmem

import (
	"os"
	"syscall"
)

// ours says whether this process's user owns the file.
func ours(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// ownedByRoot says whether root owns the file.
func ownedByRoot(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0
}
