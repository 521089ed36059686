package providers

import (
	"context"
	"errors"
)

func categoryOfContext(err error) Category {
	switch {
	case errors.Is(err, context.Canceled):
		return CategoryCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return CategoryTimeout
	}
	return CategoryConnection
}
