package main

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// inlineCode matches the inline <script> and <style> elements of a page,
// by tag: their attributes, then the text the browser hashes for a CSP
// source (up to the first closing tag, where an HTML parser ends it too).
var inlineCode = map[string]*regexp.Regexp{
	"script": regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script`),
	"style":  regexp.MustCompile(`(?is)<style\b([^>]*)>(.*?)</style`),
}

// srcAttr finds a src attribute among a script tag's attributes.
var srcAttr = regexp.MustCompile(`(?i)\bsrc\s*=`)

// pagePolicy is the Content-Security-Policy of the page served from fsys
// at name: everything from this origin only, and of the page's inline
// scripts and styles exactly those it ships, by their SHA-256 hashes,
// computed here from the file served so an edit of the page never needs
// an edit of the policy. Inline event handlers and style attributes stay
// blocked, as does any script or image the model's markdown might point
// elsewhere (img-src allows data: for the page's empty favicon). The page
// may not be framed (frame-ancestors).
func pagePolicy(fsys fs.FS, name string) (string, error) {
	page, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", fmt.Errorf("content security policy: %w", err)
	}
	sources := map[string][]string{"script": {"'self'"}, "style": {"'self'"}}
	for _, tag := range []string{"script", "style"} {
		for _, m := range inlineCode[tag].FindAllSubmatch(page, -1) {
			if tag == "script" && srcAttr.Match(m[1]) {
				continue // an external script: 'self' covers it
			}
			sum := sha256.Sum256(m[2])
			sources[tag] = append(sources[tag], "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
	}
	return strings.Join([]string{
		"default-src 'self'",
		"script-src " + strings.Join(sources["script"], " "),
		"style-src " + strings.Join(sources["style"], " "),
		"img-src 'self' data:",
		"connect-src 'self'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; "), nil
}

// embeddedPagePolicy is pagePolicy of the page this binary embeds,
// worked out once per process: the page cannot change, and the regexps
// over its 70 KB took 4.3 ms of every app's start (75 ms under -race, in
// each of the many apps the tests start).
var embeddedPagePolicy = sync.OnceValues(func() (string, error) {
	web, err := fs.Sub(webFS, "web")
	if err != nil {
		return "", err
	}
	return pagePolicy(web, "index.html")
})

// securityHeaders sets, on every answer, the policy csp and the headers
// that keep the page from being framed (X-Frame-Options for browsers
// without frame-ancestors), its files from being sniffed as another type,
// and its address from leaking to other sites.
func securityHeaders(csp string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
