//go:build !linux

package main

import "syscall"

// childProcAttr has nothing to add outside Linux: there the server outlives
// a load process that is killed without stopping it.
func childProcAttr() *syscall.SysProcAttr { return nil }
