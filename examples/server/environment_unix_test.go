//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO as the key file is refused at start, without opening it: reading
// one waits for a writer and would hang start-up.
func TestSettingsRefuseAFIFOAsTheKeyFile(t *testing.T) {
	clearModelEnv(t)
	path := filepath.Join(t.TempDir(), "anthropic.key")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Setenv("PARLEY_ANTHROPIC_API_KEY_FILE", path)
	done := make(chan error, 1)
	go func() {
		_, err := settingsFromEnv()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "PARLEY_ANTHROPIC_API_KEY_FILE=") || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO key file: %v, want a refusal naming the variable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("settingsFromEnv blocked on a FIFO key file")
	}
}
