package assistant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// ActionKind names what a user is trying to do.
type ActionKind string

// Action kinds.
const (
	UseAssistant  ActionKind = "use_assistant"  // start or continue a chat turn
	UseTool       ActionKind = "use_tool"       // have a tool offered and executed; Action.Tool set
	ReadThread    ActionKind = "read_thread"    // read ANOTHER user's thread; Action.Thread set
	WriteThread   ActionKind = "write_thread"   // reserved: the Engine lets only the owner write a thread
	ManageQuota   ActionKind = "manage_quota"   // read or set other users' quotas
	ManagePrompts ActionKind = "manage_prompts" // edit system prompts
	// RunAutonomous: run Mutate and Destructive tools without asking for
	// approval for one turn that requested it (Request.Autonomous).
	RunAutonomous ActionKind = "run_autonomous"
	// ReadEntity: put a host object the user referred to into the prompt
	// (Request.Entities, Config.Mentions); Action.Entity set.
	ReadEntity ActionKind = "read_entity"
	// AutoApproveTool: run a Mutate (or, with
	// Config.AutoApproveDestructive, Destructive) tool without an approval
	// card, by the user's standing approval or their request's
	// (Engine.SetAutoApprovals, Request.AutoApprove); Action.Tool set.
	AutoApproveTool ActionKind = "auto_approve_tool"
)

// Action is what the Authorizer decides on.
type Action struct {
	Kind   ActionKind
	Tool   *tools.Spec   // UseTool
	Thread *store.Thread // ReadThread, WriteThread
	Entity *EntityRef    // ReadEntity
}

// Authorizer decides whether a user may perform an action. It returns nil to
// allow and a non-nil error to deny; the error is logged, never shown. The
// Engine consults it for every gate: using the assistant, each tool offered
// to the model and each tool call the model makes, and reading another
// user's thread. Thread ownership itself is enforced by the Engine: the
// owner may read and write their threads, nobody else may write them, and
// ReadThread is asked only for a non-owner, so returning nil for it grants
// that user read access. Implementations must be safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, u parley.User, a Action) error
}

// AuthorizerFunc adapts a function to an Authorizer.
type AuthorizerFunc func(ctx context.Context, u parley.User, a Action) error

// Authorize calls f(ctx, u, a).
func (f AuthorizerFunc) Authorize(ctx context.Context, u parley.User, a Action) error {
	return f(ctx, u, a)
}

// RoleAuthorizer is a ready-made role-based Authorizer.
//
//   - UseAssistant: allowed unless Disabled; when Enabled is non-empty the
//     user needs one of its roles.
//   - UseTool: Tools maps a role to the tools it grants, and Everyone
//     lists the tools granted to every user. A grant is a tool name,
//     "category:<name>", or "*" for every tool ("*" means nothing else:
//     it is not a role, and New refuses it as a key of Tools). A tool
//     granted neither to everyone nor to one of the user's roles is
//     denied; with neither set, no tool is granted.
//   - ReadThread (another user's thread): a user with a Staff role.
//   - WriteThread: the owner only.
//   - ManageQuota, ManagePrompts: a user with a Staff role.
//   - RunAutonomous: a user with one of the Autonomous roles.
//   - AutoApproveTool: a tool the user may use (their own standing
//     approval; the Engine adds the Destructive rule).
//   - ReadEntity: what Entities says; nil denies every reference.
type RoleAuthorizer struct {
	Disabled   bool                // turn the assistant off for everyone
	Enabled    []string            // roles that may chat; empty: every user
	Tools      map[string][]string // role -> granted tools; nil: none
	Everyone   []string            // tools granted to every user, whatever their roles
	Staff      []string            // roles that may read others' threads and manage quotas and prompts
	Autonomous []string            // roles that may run a turn without approvals; empty: nobody
	// Entities decides ReadEntity: whether u may have ref put into the
	// prompt. It is the host's ownership check; nil denies every reference.
	Entities func(ctx context.Context, u parley.User, ref EntityRef) bool
}

var _ Authorizer = RoleAuthorizer{}

// Authorize implements Authorizer.
func (r RoleAuthorizer) Authorize(ctx context.Context, u parley.User, a Action) error {
	if r.Disabled {
		return fmt.Errorf("assistant disabled: %w", ErrForbidden)
	}
	if len(r.Enabled) > 0 && !hasAny(u, r.Enabled) {
		return fmt.Errorf("user %q has none of the enabled roles: %w", u.ID, ErrForbidden)
	}
	switch a.Kind {
	case UseAssistant:
		return nil
	case UseTool, AutoApproveTool:
		if a.Tool != nil && r.grants(u, a.Tool) {
			return nil
		}
	case ReadThread:
		if a.Thread != nil && (a.Thread.OwnerID == u.ID || hasAny(u, r.Staff)) {
			return nil
		}
	case WriteThread:
		if a.Thread != nil && a.Thread.OwnerID == u.ID {
			return nil
		}
	case ManageQuota, ManagePrompts:
		if hasAny(u, r.Staff) {
			return nil
		}
	case RunAutonomous:
		if hasAny(u, r.Autonomous) {
			return nil
		}
	case ReadEntity:
		if a.Entity != nil && r.Entities != nil && r.Entities(ctx, u, *a.Entity) {
			return nil
		}
	}
	return fmt.Errorf("%s denied for user %q: %w", a.Kind, u.ID, ErrForbidden)
}

func (r RoleAuthorizer) grants(u parley.User, spec *tools.Spec) bool {
	granted := func(grants []string) bool {
		return slices.ContainsFunc(grants, func(g string) bool {
			return g == "*" || g == spec.Name || (spec.Category != "" && g == "category:"+spec.Category)
		})
	}
	if granted(r.Everyone) {
		return true
	}
	return slices.ContainsFunc(u.Roles, func(role string) bool { return granted(r.Tools[role]) })
}

func hasAny(u parley.User, roles []string) bool {
	return slices.ContainsFunc(roles, u.HasRole)
}

// checkGrants reports the grants of a RoleAuthorizer that name no tool and
// no category of reg: a typo there denies a tool silently, and the user
// only sees the model fail to use it. A role "*" is refused too: "*" grants
// every tool, and the tools of every user are Everyone's.
func checkGrants(a Authorizer, reg tools.Registry) []error {
	var r RoleAuthorizer
	switch v := a.(type) {
	case RoleAuthorizer:
		r = v
	case *RoleAuthorizer:
		if v == nil {
			return nil
		}
		r = *v
	default:
		return nil
	}
	names, cats := map[string]bool{}, map[string]bool{}
	if reg != nil {
		for _, t := range reg.All() {
			s := t.Spec()
			names[s.Name], cats[s.Category] = true, s.Category != ""
		}
	}
	var errs []error
	if _, ok := r.Tools["*"]; ok {
		errs = append(errs, errors.New(`RoleAuthorizer.Tools has the role "*": "*" is not a role; list the tools of every user in Everyone`))
	}
	grants := map[string][]string{}
	for role, gs := range r.Tools {
		grants[fmt.Sprintf("Tools[%q]", role)] = gs
	}
	grants["Everyone"] = r.Everyone
	for _, where := range slices.Sorted(maps.Keys(grants)) {
		for _, g := range grants[where] {
			cat, isCat := strings.CutPrefix(g, "category:")
			switch {
			case g == "*", isCat && cats[cat], !isCat && names[g]:
				continue
			case isCat:
				errs = append(errs, fmt.Errorf("RoleAuthorizer.%s grants %q, but no tool has the category %q", where, g, cat))
			case cats[g]:
				errs = append(errs, fmt.Errorf("RoleAuthorizer.%s grants %q, which names no tool; for the category, grant %q", where, g, "category:"+g))
			default:
				errs = append(errs, fmt.Errorf("RoleAuthorizer.%s grants %q, which names no tool in Config.Tools", where, g))
			}
		}
	}
	return errs
}
