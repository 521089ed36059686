package sqlquota_test

import (
	"sync"
	"testing"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
	"github.com/parleyhq/parley/store/sqlstore"
)

func TestStoreAndLedgerMigrateOneSchemaAtOnce(t *testing.T) {
	dsn := sqltest.PostgresDSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			db := sqltest.OpenPostgres(t, dsn)
			if i%2 == 0 {
				st, err := sqlstore.New(db, sqlstore.Options{})
				if err == nil {
					err = st.Migrate(t.Context())
				}
				errs <- err
				return
			}
			l, err := sqlquota.New(db, quota.Policy{}, sqlquota.Options{})
			if err == nil {
				err = l.Migrate(t.Context())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent migration of the store and the ledger on one schema: %v", err)
		}
	}
}
