//go:build unix

package storm

import (
	"fmt"
	"syscall"
)

// fdHeadroom is the descriptors kept free for everything but the clients'
// sockets (the record file, PostgreSQL, an in-process gateway's listener).
const fdHeadroom = 64

// checkFDs fails early, with the fix, when the process cannot open a socket
// per client; otherwise the storm would die of EMFILE halfway through.
// sameProcess counts the accepting side too (an in-process gateway).
func checkFDs(clients int, sameProcess bool) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: let the storm find out
	}
	need := uint64(clients) + fdHeadroom
	if sameProcess {
		need += uint64(clients)
	}
	if lim.Cur >= need {
		return nil
	}
	if lim.Max >= need {
		lim.Cur = need
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
			return nil
		}
	}
	return fmt.Errorf("storm: %d clients need about %d open files, the limit is %d (raise it with ulimit -n)", clients, need, lim.Cur)
}
