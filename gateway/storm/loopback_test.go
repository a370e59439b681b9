package storm

import "testing"

func TestCheckGateway(t *testing.T) {
	tests := []struct {
		url         string
		allowRemote bool
		ok          bool
	}{
		{"ws://127.0.0.1:8080", false, true},
		{"ws://127.8.9.10:8080/ws", false, true},
		{"ws://[::1]:8080", false, true},
		{"http://localhost:8080", false, true},
		{"ws://10.0.0.5:8080", false, false},
		{"ws://[2001:db8::1]:8080", false, false},
		{"ws://gateway.internal:8080", false, false},
		{"ws://gateway.internal:8080", true, true},
		{"ws://0.0.0.0:8080", false, false},
		{"tcp://127.0.0.1:8080", false, false},
		{"ws://:8080", false, false},
		{"://", false, false},
	}
	for _, tt := range tests {
		if err := checkGateway(tt.url, tt.allowRemote); (err == nil) != tt.ok {
			t.Errorf("checkGateway(%q, %v) = %v, want ok %v", tt.url, tt.allowRemote, err, tt.ok)
		}
	}
}
