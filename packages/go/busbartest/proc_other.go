//go:build !linux

// Elsewhere the broker is stopped by Stop and the tests' clean-ups only.
package busbartest

import "syscall"

func dieWithParent() *syscall.SysProcAttr {
	return nil
}
