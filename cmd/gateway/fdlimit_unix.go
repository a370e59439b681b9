//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// fdReserve is the descriptors kept apart from client connections: standard
// streams, the listener, the poller, refused connections lingering for
// their 503, and slack.
const fdReserve = 128

// defaultMaxConns is the descriptor limit less fdReserve and the database
// connections: the most client connections the process can hold without
// running out of descriptors.
func defaultMaxConns(dbConns int) (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("cannot read the descriptor limit (%v); set it explicitly", err)
	}
	limit := min(lim.Cur, 1<<24)
	n := int(limit) - fdReserve - dbConns
	if n < 16 {
		return 0, fmt.Errorf("the descriptor limit %d leaves %d connections after %d reserved; raise it (ulimit -n)", lim.Cur, n, fdReserve+dbConns)
	}
	return n, nil
}
