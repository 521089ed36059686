//go:build unix

package anthropic_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers/anthropic"
)

// A FIFO as the key file is refused at once: opening it for reading would
// wait for a writer and hang the host's start-up.
func TestKeyFromFileRefusesAFIFOWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := anthropic.KeyFromFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, anthropic.ErrKeyFileNotRegular) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("KeyFromFile(a FIFO) = %v, want ErrKeyFileNotRegular naming a named pipe", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KeyFromFile(a FIFO) blocked: it opened the FIFO for reading")
	}
}
