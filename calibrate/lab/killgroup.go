//go:build unix

package lab

import "syscall"

// killGroup SIGKILLs the process group led by pid (a child started with
// processAttr). Errors are ignored: the group may already be gone.
func killGroup(pid int) {
	if pid > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}
