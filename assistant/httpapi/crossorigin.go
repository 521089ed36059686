package httpapi

import (
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/assistant"
)

// crossOriginProtection is the CSRF check in front of every route: a
// browser's cross-origin request of any method but GET, HEAD and OPTIONS
// (by Sec-Fetch-Site, or an Origin that does not match Host) is refused
// unless its origin is in Config.TrustedOrigins. GET, HEAD and OPTIONS
// always pass, as do requests
// with neither header: same-origin requests of older browsers and
// non-browser clients, which carry no ambient cookies to abuse. It panics on
// a malformed trusted origin, a programming error caught at start-up.
func (h *Handler) crossOriginProtection() *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	for i, origin := range h.cfg.TrustedOrigins {
		if err := cop.AddTrustedOrigin(origin); err != nil {
			panic(fmt.Sprintf("httpapi: Config.TrustedOrigins[%d]: %v", i, err))
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.cfg.Logger.Info("httpapi: cross-origin request refused", "method", r.Method, "path", r.URL.Path,
			"origin", clip(r.Header.Get("Origin"), maxEchoBytes), "sec_fetch_site", clip(r.Header.Get("Sec-Fetch-Site"), maxEchoBytes))
		closeUnread(w, r)
		h.refuse(w, r, http.StatusForbidden, assistant.CodeForbidden, "The cross-origin request was refused.")
	}))
	return cop
}
