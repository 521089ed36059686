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
)

// maxKeyFileBytes bounds what KeyFromFile reads; a key is about a hundred
// bytes.
const maxKeyFileBytes = 64 << 10

// KeyFromFile reads an API key for Config.APIKey from the file at path,
// trimmed of surrounding white space. It refuses, with an error wrapping
// ErrKeyFilePermissions, a file whose mode is not exactly 0600 or 0400
// (on Windows, where Go reports every file as 0666 or 0444, that is every
// file); with ErrKeyFileEmpty, an empty one; and a file that is not
// regular or holds more than one word. The error never contains the
// file's content.
func KeyFromFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	defer f.Close()
	// Stat the opened file, not the path, so the checked file is the one
	// read.
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("anthropic: key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("anthropic: key file %s is not a regular file", path)
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
