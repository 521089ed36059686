package sentbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
)

// maxCopy is the largest body Middleware copies; a larger one is sent as
// the SDK made it.
const maxCopy = 32 << 20

// errReleased is GetBody's error once the response has come: no retry of
// this request is made after it.
var errReleased = errors.New("sentbody: the request was answered; its body is gone")

// Middleware is an SDK middleware (option.Middleware of openai-go and of
// anthropic-sdk-go). A request without a body, or whose body the
// transport could not send again (no GetBody), or of unknown length, is
// passed on as it is.
func Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil || req.ContentLength <= 0 || req.ContentLength > maxCopy {
		return next(req)
	}
	rc, err := req.GetBody()
	if err != nil {
		return next(req)
	}
	b := make([]byte, req.ContentLength)
	_, err = io.ReadFull(rc, b)
	rc.Close()
	if err != nil {
		return next(req)
	}
	req.Body.Close() // never sent: the copy is
	s := &source{b: b}
	r2 := new(http.Request)
	*r2 = *req // as http.Request.WithContext does
	r2.Body, _ = s.getBody()
	r2.GetBody = s.getBody
	res, err := next(r2)
	s.release()
	return res, err
}

// source is the copy GetBody sends from until release.
type source struct {
	mu sync.Mutex
	b  []byte
}

// getBody is the sent request's GetBody.
func (s *source) getBody() (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b == nil {
		return nil, errReleased
	}
	return &body{r: bytes.NewReader(s.b)}, nil
}

func (s *source) release() {
	s.mu.Lock()
	s.b = nil
	s.mu.Unlock()
}

// body is a sent body: it lets go of its bytes at their end, or when
// closed. The transport reads it on one goroutine and may close it on
// another.
type body struct {
	mu sync.Mutex
	r  *bytes.Reader
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r == nil {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if b.r.Len() == 0 {
		b.r = nil
	}
	return n, err
}

func (b *body) Close() error {
	b.mu.Lock()
	b.r = nil
	b.mu.Unlock()
	return nil
}
