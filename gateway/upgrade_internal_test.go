package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"
)

// TestCheckUpgradeAgreesWithTheLibrary: checkUpgrade refuses exactly the
// requests websocket.Accept refuses, with the same status, so that nothing
// is claimed for a handshake the library would not upgrade; and, beyond
// the library, a request with a body, which net/http would not let the
// upgrade answer (TestRefusedUpgradeChangesNothing shows it on a real
// server). (The recorder cannot be hijacked: for a request both accept, the
// library answers 501.)
func TestCheckUpgradeAgreesWithTheLibrary(t *testing.T) {
	valid := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://gw.example/ws?attempt=1", nil)
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Version", "13")
		r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		return r
	}
	cases := []struct {
		name    string
		edit    func(r *http.Request)
		refused int // checkUpgrade's status where it refuses what the library accepts
	}{
		{"valid", func(*http.Request) {}, 0},
		{"HTTP/1.0", func(r *http.Request) { r.ProtoMajor, r.ProtoMinor = 1, 0 }, 0},
		{"no Connection", func(r *http.Request) { r.Header.Del("Connection") }, 0},
		{"Connection keep-alive, Upgrade", func(r *http.Request) { r.Header.Set("Connection", "keep-alive, Upgrade") }, 0},
		{"Connection lower case", func(r *http.Request) { r.Header.Set("Connection", "upgrade") }, 0},
		{"no Upgrade", func(r *http.Request) { r.Header.Del("Upgrade") }, 0},
		{"Upgrade h2c", func(r *http.Request) { r.Header.Set("Upgrade", "h2c") }, 0},
		{"Upgrade WebSocket", func(r *http.Request) { r.Header.Set("Upgrade", "WebSocket") }, 0},
		{"POST", func(r *http.Request) { r.Method = http.MethodPost }, 0},
		{"HEAD", func(r *http.Request) { r.Method = http.MethodHead }, 0},
		{"version 8", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Version", "8") }, 0},
		{"no version", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Version") }, 0},
		{"no key", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Key") }, 0},
		{"two keys", func(r *http.Request) { r.Header.Add("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==") }, 0},
		{"key not base64", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "not base64!") }, 0},
		{"key of 15 bytes", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAA") }, 0},
		{"key with spaces around", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", " dGhlIHNhbXBsZSBub25jZQ== ") }, 0},
		{"same-host Origin", func(r *http.Request) { r.Header.Set("Origin", "https://gw.example") }, 0},
		{"same host, other case", func(r *http.Request) { r.Header.Set("Origin", "http://GW.example") }, 0},
		{"foreign Origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 0},
		{"Origin without a host", func(r *http.Request) { r.Header.Set("Origin", "null") }, 0},
		{"Origin unparseable", func(r *http.Request) { r.Header.Set("Origin", "http://[::1") }, 0},
		{"chunked", func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }, http.StatusBadRequest},
		{"Content-Length 5", func(r *http.Request) { r.ContentLength = 5 }, http.StatusBadRequest},
		{"chunked POST", func(r *http.Request) { r.Method, r.ContentLength = http.MethodPost, -1 }, 0},
	}
	for _, c := range cases {
		r := valid()
		c.edit(r)
		ours := checkUpgrade(r)
		rec := httptest.NewRecorder()
		_, err := websocket.Accept(rec, r, nil)
		libStatus := rec.Code
		switch {
		case err == nil:
			t.Errorf("%s: the recorder was upgraded", c.name)
		case c.refused != 0:
			if libStatus != http.StatusNotImplemented || ours == nil || ours.status != c.refused {
				t.Errorf("%s: the library answers %d, checkUpgrade %v; want the library to accept and checkUpgrade to answer %d", c.name, libStatus, ours, c.refused)
			}
		case ours == nil && libStatus != http.StatusNotImplemented:
			t.Errorf("%s: checkUpgrade lets it through, the library answers %d", c.name, libStatus)
		case ours != nil && ours.status != libStatus:
			t.Errorf("%s: checkUpgrade answers %d, the library %d", c.name, ours.status, libStatus)
		}
	}
}
