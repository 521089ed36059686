package sentbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sdkRequest is a request as the SDKs make it: a body a retry can send
// again, and its length.
func sdkRequest(t *testing.T, url string, b []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The transport sends the same bytes, and may send them again from
// GetBody until the response; after it, the sent request holds none.
func TestTheSentBodyIsTheSameAndLetGoOfOnceAnswered(t *testing.T) {
	want := []byte(strings.Repeat("the thread, the tools, the prompt. ", 1000))
	var got []byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer ts.Close()
	var sent *http.Request
	res, err := Middleware(sdkRequest(t, ts.URL, want), func(r *http.Request) (*http.Response, error) {
		sent = r
		again, err := r.GetBody()
		if err != nil {
			t.Fatalf("GetBody before the response: %v", err)
		}
		if b, _ := io.ReadAll(again); !bytes.Equal(b, want) {
			t.Errorf("GetBody before the response gave %d bytes, want the %d sent", len(b), len(want))
		}
		return http.DefaultClient.Do(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !bytes.Equal(got, want) {
		t.Errorf("the server got %d bytes, want the %d sent", len(got), len(want))
	}
	if _, err := sent.GetBody(); !errors.Is(err, errReleased) {
		t.Errorf("GetBody after the response: %v, want %v", err, errReleased)
	}
	if b := sent.Body.(*body); b.r != nil {
		t.Errorf("the sent body still holds %d bytes", b.r.Len())
	}
}

// A body read to its end lets go of its bytes; so does one closed early.
func TestABodyLetsGoAtItsEndOrWhenClosed(t *testing.T) {
	s := &source{b: []byte("abc")}
	rc, _ := s.getBody()
	r := rc.(*body)
	if b, err := io.ReadAll(r); err != nil || string(b) != "abc" || r.r != nil {
		t.Errorf("read %q, %v; holds bytes: %v", b, err, r.r != nil)
	}
	rc, _ = s.getBody()
	r = rc.(*body)
	r.Close()
	if n, err := r.Read(make([]byte, 3)); n != 0 || err != io.EOF {
		t.Errorf("read after Close: %d, %v", n, err)
	}
}

// What the transport could not send again, or of unknown length, passes
// as it is.
func TestRequestsItCannotCopyPassAsTheyAre(t *testing.T) {
	noBody := sdkRequest(t, "http://x", nil)
	noBody.Body, noBody.GetBody = http.NoBody, nil
	noGetBody := sdkRequest(t, "http://x", []byte("abc"))
	noGetBody.GetBody = nil
	unknown := sdkRequest(t, "http://x", []byte("abc"))
	unknown.ContentLength = -1
	short := sdkRequest(t, "http://x", []byte("abc"))
	short.ContentLength = 10 // GetBody gives fewer bytes than it says
	failing := sdkRequest(t, "http://x", []byte("abc"))
	failing.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
	for name, req := range map[string]*http.Request{"no body": noBody, "no GetBody": noGetBody, "unknown length": unknown, "short": short, "GetBody fails": failing} {
		_, _ = Middleware(req, func(r *http.Request) (*http.Response, error) {
			if r != req {
				t.Errorf("%s: the request was replaced", name)
			}
			return nil, errors.New("not sent")
		})
	}
}
