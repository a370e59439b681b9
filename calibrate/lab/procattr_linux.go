package lab

import "syscall"

// processAttr puts a child in its own process group, so that one signal
// to the group ends it with everything it forked, and asks the kernel to
// SIGKILL it should this process die without cleaning up. cred, if set,
// runs it as another user.
func processAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}
