package parley

import "slices"

// User is the host application's user as Parley sees it: an opaque ID, the
// roles the host's Authorizer reasons about, and a few display attributes.
// Parley never creates or stores users; the host authenticates each request
// and hands the User to the Engine.
type User struct {
	ID       string            // stable, unique id; required
	Roles    []string          // host-defined roles, e.g. "user", "staff"
	Name     string            // display name, may be empty
	Locale   string            // BCP 47 tag, e.g. "en-GB"; may be empty
	TimeZone string            // IANA name, e.g. "Europe/Berlin"; may be empty
	Attrs    map[string]string // host-defined attributes, never sent to the model
}

// HasRole reports whether u has role r.
func (u User) HasRole(r string) bool { return slices.Contains(u.Roles, r) }
