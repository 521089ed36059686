package main

import "syscall"

// childProcAttr kills the server if this process dies without stopping it
// (SIGKILL, a crash), so a load run never leaves a server behind.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
