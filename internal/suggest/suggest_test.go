package suggest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"admission", "admission", 0},
		{"admision", "admission", 1}, // one deletion
		{"bse", "base", 1},
		{"kitten", "sitting", 3}, // the textbook case
		{"", "abc", 3},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
