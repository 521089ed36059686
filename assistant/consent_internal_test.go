package assistant

import (
	"regexp"
	"testing"
)

// FuzzAuditName: whatever a program names, the audit row keeps a valid
// tool name or a fixed stand-in, never the text itself.
func FuzzAuditName(f *testing.F) {
	for _, s := range []string{"weather", "", "a.b", "\x00", "héllo", "../x", string(make([]byte, 65))} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, name string) {
		got := auditName(name)
		if got != "(invalid name)" && (got != name || !valid.MatchString(got)) {
			t.Fatalf("auditName(%q) = %q", name, got)
		}
		if valid.MatchString(name) && got != name {
			t.Fatalf("auditName(%q) = %q, want the name kept", name, got)
		}
	})
}
