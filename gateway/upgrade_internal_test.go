package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"
)

// TestCheckUpgradeAgreesWithTheLibrary: checkUpgrade refuses exactly the
// requests websocket.Accept refuses, with the same status, so that nothing
// is claimed for a handshake the library would not upgrade. (The recorder
// cannot be hijacked: for a request both accept, the library answers 501.)
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
		name string
		edit func(r *http.Request)
	}{
		{"valid", func(*http.Request) {}},
		{"HTTP/1.0", func(r *http.Request) { r.ProtoMajor, r.ProtoMinor = 1, 0 }},
		{"no Connection", func(r *http.Request) { r.Header.Del("Connection") }},
		{"Connection keep-alive, Upgrade", func(r *http.Request) { r.Header.Set("Connection", "keep-alive, Upgrade") }},
		{"Connection lower case", func(r *http.Request) { r.Header.Set("Connection", "upgrade") }},
		{"no Upgrade", func(r *http.Request) { r.Header.Del("Upgrade") }},
		{"Upgrade h2c", func(r *http.Request) { r.Header.Set("Upgrade", "h2c") }},
		{"Upgrade WebSocket", func(r *http.Request) { r.Header.Set("Upgrade", "WebSocket") }},
		{"POST", func(r *http.Request) { r.Method = http.MethodPost }},
		{"HEAD", func(r *http.Request) { r.Method = http.MethodHead }},
		{"version 8", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Version", "8") }},
		{"no version", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Version") }},
		{"no key", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Key") }},
		{"two keys", func(r *http.Request) { r.Header.Add("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==") }},
		{"key not base64", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "not base64!") }},
		{"key of 15 bytes", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAA") }},
		{"key with spaces around", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", " dGhlIHNhbXBsZSBub25jZQ== ") }},
		{"same-host Origin", func(r *http.Request) { r.Header.Set("Origin", "https://gw.example") }},
		{"same host, other case", func(r *http.Request) { r.Header.Set("Origin", "http://GW.example") }},
		{"foreign Origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }},
		{"Origin without a host", func(r *http.Request) { r.Header.Set("Origin", "null") }},
		{"Origin unparseable", func(r *http.Request) { r.Header.Set("Origin", "http://[::1") }},
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
		case ours == nil && libStatus != http.StatusNotImplemented:
			t.Errorf("%s: checkUpgrade lets it through, the library answers %d", c.name, libStatus)
		case ours != nil && ours.status != libStatus:
			t.Errorf("%s: checkUpgrade answers %d, the library %d", c.name, ours.status, libStatus)
		}
	}
}
