package anthropic

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// Errors of KeyFromFile.
var (
	// ErrKeyFilePermissions: the key file's mode is not 0600 or 0400, so
	// other users may read (or write) it.
	ErrKeyFilePermissions = errors.New("anthropic: key file must have mode 0600 or 0400")
	// ErrKeyFileEmpty: the key file holds nothing but white space.
	ErrKeyFileEmpty = errors.New("anthropic: key file is empty")
	// ErrKeyFileNotRegular: the path names a FIFO, a device, a socket or
	// a directory, not a regular file.
	ErrKeyFileNotRegular = errors.New("anthropic: key file is not a regular file")
)

// fileKind names the kind of a file that is not regular, for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	default:
		return "file that is not regular"
	}
}

// maxKeyFileBytes bounds what KeyFromFile reads; a key is about a hundred
// bytes.
const maxKeyFileBytes = 64 << 10

// KeyFromFile reads an API key for Config.APIKey from the file at path,
// trimmed of surrounding white space. It refuses, with an error wrapping
// ErrKeyFilePermissions, a file whose mode is not exactly 0600 or 0400
// (on Windows, where Go reports every file as 0666 or 0444, that is every
// file); with ErrKeyFileEmpty, an empty one; with ErrKeyFileNotRegular, a
// FIFO, a device or a directory, which it never opens (opening a FIFO
// waits for a writer); and one that holds more than one word. The error
// never contains the file's content.
func KeyFromFile(path string) (string, error) {
	// Stat the path before opening it: open(2) on a FIFO blocks until
	// something writes to it, which would hang the caller's start-up.
	pre, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	if !pre.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is a %s", ErrKeyFileNotRegular, path, fileKind(pre.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	defer f.Close()
	// Stat the opened file too, so the checked file is the one read.
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	if !fi.Mode().IsRegular() || !os.SameFile(pre, fi) {
		return "", fmt.Errorf("%w: %s changed while it was read", ErrKeyFileNotRegular, path)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 && perm != 0o400 {
		return "", fmt.Errorf("%w: %s has mode %#o", ErrKeyFilePermissions, path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	if len(b) > maxKeyFileBytes {
		return "", fmt.Errorf("anthropic: key file %s is over %d bytes", path, maxKeyFileBytes)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("%w: %s", ErrKeyFileEmpty, path)
	}
	if strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		// Not a key: a header value cannot hold it, and sending part of
		// it would only fail later with a less useful error.
		return "", fmt.Errorf("anthropic: key file %s holds more than one word", path)
	}
	return key, nil
}
