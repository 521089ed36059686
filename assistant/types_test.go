package assistant_test

import "github.com/parleyhq/parley"

type parleyUser = parley.User
