//go:build unix && !linux

package lab

import "syscall"

// processAttr puts a child in its own process group, so that one signal
// to the group ends it with everything it forked. cred, if set, runs it as
// another user.
func processAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
