//go:build unix

package budget

import (
	"os"
	"path/filepath"
	"syscall"
)

// FreeDisk is the space free to this user on the file system that holds
// path (or its nearest existing parent); -1 when it cannot be told.
func FreeDisk(path string) int64 {
	p, err := filepath.Abs(path)
	if err != nil {
		return -1
	}
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize)
		}
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			return -1
		}
		p = filepath.Dir(p)
	}
}
