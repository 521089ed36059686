package sqlstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// Two Stores on separate pools stand for two app instances: a user's
// concurrent choices through both, first and later ones, all succeed and
// leave one row.
func TestSetModelPreferenceAcrossInstances(t *testing.T) {
	const writers = 32
	for _, c := range sharedBackends {
		t.Run(c.name, func(t *testing.T) {
			open := c.open(t)
			db := open()
			stores := []*sqlstore.Store{migrated(t, db), migrated(t, open())}
			for round := range 3 {
				errs := make([]error, writers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range writers {
					wg.Go(func() {
						<-start
						errs[i] = stores[i%2].SetModelPreference(t.Context(), store.ModelPreference{UserID: "u",
							Connection: fmt.Sprint("conn-", i), Model: fmt.Sprint("model-", i), UpdatedAt: at(i)})
					})
				}
				close(start)
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if n := countRows(t, db, "parley_model_preferences"); n != 1 {
					t.Errorf("round %d: %d rows for one user, want 1", round, n)
				}
			}
		})
	}
}

// User ids, connections and models are keys, stored as they are: on
// PostgreSQL one holding NUL is ErrInvalid, and nothing is written.
func TestSetModelPreferenceRefusesNULInKeysOnPostgres(t *testing.T) {
	s := migrated(t, sqltest.Postgres(t))
	ctx := t.Context()
	for _, p := range []store.ModelPreference{
		{UserID: "nul\x00user", Connection: "c", Model: "m"},
		{UserID: "u", Connection: "nul\x00conn", Model: "m"},
		{UserID: "u", Connection: "c", Model: "nul\x00model"},
	} {
		if err := s.SetModelPreference(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetModelPreference(%q, %q, %q): err = %v, want ErrInvalid", p.UserID, p.Connection, p.Model, err)
		}
	}
	if _, err := s.ModelPreference(ctx, "u"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ModelPreference after the refused sets: err = %v, want ErrNotFound", err)
	}
}
