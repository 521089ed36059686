package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers/fake"
)

// A request refused before its body is read (401, 403, 415) is answered at
// once, with the body never sent: a client that stalls after its headers
// neither delays the refusal nor keeps the connection. The test only sends
// headers; a server that waited for the body would never answer, and the
// connection's deadline (a generous test timeout, not a measurement) would
// fail the read.
func TestRefusalsBeforeTheBodyDoNotWaitForIt(t *testing.T) {
	h := newHarness(t, fake.New())
	refusals := []struct {
		name, path, headers string
		status              int
	}{
		{"unauthenticated", "/api/chat/stream", "Content-Type: application/json\r\n", http.StatusUnauthorized},
		{"unauthenticated AI SDK", "/api/chat/ui", "Content-Type: application/json\r\n", http.StatusUnauthorized},
		{"not JSON", "/api/chat/stream", "X-User: alice\r\nContent-Type: text/plain\r\n", http.StatusUnsupportedMediaType},
		{"cross-origin", "/api/chat/stream", "X-User: alice\r\nContent-Type: application/json\r\nSec-Fetch-Site: cross-site\r\n", http.StatusForbidden},
	}
	framings := map[string]string{"sized": "Content-Length: 100\r\n", "chunked": "Transfer-Encoding: chunked\r\n"}
	for _, rf := range refusals {
		for fname, framing := range framings {
			t.Run(rf.name+" "+fname, func(t *testing.T) {
				conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
					t.Fatal(err)
				}
				if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: example.test\r\n%s%s\r\n", rf.path, rf.headers, framing); err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer while the body was not sent: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rf.status {
					t.Errorf("status %d, want %d", resp.StatusCode, rf.status)
				}
				if !resp.Close {
					t.Error("the connection is kept open for a body nobody reads")
				}
				// The server closes its side: the next read ends.
				if _, err := br.ReadByte(); err != io.EOF {
					t.Errorf("read after the refusal: %v, want EOF", err)
				}
			})
		}
	}
}
