package anthropic_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers/anthropic"
)

func skipOnWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file modes carry no permissions; KeyFromFile refuses every file there")
	}
}

func writeKey(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// Chmod, not WriteFile's mode, which the umask would narrow.
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKeyFromFileReadsAPrivateFileTrimmed(t *testing.T) {
	skipOnWindows(t)
	for _, mode := range []os.FileMode{0o600, 0o400} {
		key, err := anthropic.KeyFromFile(writeKey(t, "  sk-ant-api03-abc_DEF-123\n", mode))
		if err != nil || key != "sk-ant-api03-abc_DEF-123" {
			t.Errorf("mode %#o: key %q, err %v", mode, key, err)
		}
	}
}

func TestKeyFromFileRefusesFilesOthersCanReach(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o440, 0o700, 0o500, 0o660, 0o666} {
		_, err := anthropic.KeyFromFile(writeKey(t, "sk-ant-secret", mode))
		if !errors.Is(err, anthropic.ErrKeyFilePermissions) {
			t.Errorf("mode %#o: err = %v, want ErrKeyFilePermissions", mode, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-ant-secret") {
			t.Errorf("mode %#o: error %q shows the key", mode, err)
		}
	}
}

func TestKeyFromFileRefusesEmptyFiles(t *testing.T) {
	skipOnWindows(t)
	for _, content := range []string{"", " \n\t\n"} {
		if _, err := anthropic.KeyFromFile(writeKey(t, content, 0o600)); !errors.Is(err, anthropic.ErrKeyFileEmpty) {
			t.Errorf("%q: err = %v, want ErrKeyFileEmpty", content, err)
		}
	}
}

func TestKeyFromFileRefusesWhatIsNotOneKey(t *testing.T) {
	skipOnWindows(t)
	_, err := anthropic.KeyFromFile(writeKey(t, "ANTHROPIC_API_KEY=sk-ant-secret\nother line\n", 0o600))
	if err == nil || errors.Is(err, anthropic.ErrKeyFileEmpty) || errors.Is(err, anthropic.ErrKeyFilePermissions) {
		t.Fatalf("err = %v, want a refusal of a multi-line file", err)
	}
	if strings.Contains(err.Error(), "sk-ant-secret") {
		t.Errorf("error %q shows the content", err)
	}
	if _, err := anthropic.KeyFromFile(writeKey(t, strings.Repeat("k", 70<<10), 0o600)); err == nil {
		t.Error("a 70 KiB file was read as a key")
	}
}

func TestKeyFromFileReportsAMissingFileOrADirectory(t *testing.T) {
	if _, err := anthropic.KeyFromFile(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := anthropic.KeyFromFile(dir); err == nil {
		t.Error("a directory was read as a key file")
	}
}
