// On Linux the kernel kills the broker if the test process dies first.
package busbartest

import "syscall"

func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
