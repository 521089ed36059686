package assistant_test

import (
	"iter"

	"github.com/parleyhq/parley"
)

type parleyUser = parley.User

// iterPull is iter.Pull, named here so tests read as what they do.
func iterPull[V any](seq func(func(V) bool)) (func() (V, bool), func()) { return iter.Pull(seq) }
