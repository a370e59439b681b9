package human

import (
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {100500, "100,500"}, {1234567, "1,234,567"},
		{-1000, "-1,000"}, {-100, "-100"}, {-9223372036854775808, "-9,223,372,036,854,775,808"},
	}
	for _, tt := range tests {
		if got := Count(tt.n); got != tt.want {
			t.Errorf("Count(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

func TestFixed(t *testing.T) {
	tests := []struct {
		x        float64
		decimals int
		want     string
	}{
		{766711.46, 1, "766,711.5"}, {34.9, 1, "34.9"}, {999.96, 1, "1,000.0"}, {-1234.5, 1, "-1,234.5"},
		{1234567, 0, "1,234,567"}, {0, 1, "0.0"},
	}
	for _, tt := range tests {
		if got := Fixed(tt.x, tt.decimals); got != tt.want {
			t.Errorf("Fixed(%v, %d) = %s, want %s", tt.x, tt.decimals, got, tt.want)
		}
	}
}

func TestMillis(t *testing.T) {
	tests := []struct {
		ms   float64
		want string
	}{
		{0, "0ms"}, {10, "10ms"}, {12.3456, "12.346ms"}, {999.4, "999.4ms"}, {1000, "1s"}, {623900, "623.9s"}, {4580.4, "4.58s"},
		{9_999_999, "9999.999s"},
		// From 10,000 s: 10,000 s = 2 h 46 min 40 s.
		{10_000_000, "2h46m40s"}, {-10_000_000, "-2h46m40s"},
		// 99 h 59 min 59.4 s rounds to the second, still below 100 h.
		{359_999_400, "99h59m59s"},
		// 684,082,800 s = 7,917 days (684,028,800 s) and 54,000 s = 15 h.
		{684_082_800_000, "7,917d 15h"},
		// 100 h exactly: 4 days and 4 hours.
		{360_000_000, "4d 4h"},
	}
	for _, tt := range tests {
		if got := Millis(tt.ms); got != tt.want {
			t.Errorf("Millis(%v) = %s, want %s", tt.ms, got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "<1s"}, {999 * time.Millisecond, "<1s"}, {1500 * time.Millisecond, "2s"}, {59 * time.Second, "59s"},
		{65 * time.Second, "1m05s"}, {3599 * time.Second, "59m59s"}, {3600 * time.Second, "1h00m"},
		{2*time.Hour + 3*time.Minute + 29*time.Second, "2h03m"}, {2*time.Hour + 3*time.Minute + 30*time.Second, "2h04m"},
		// 100 h = 4 d 4 h; 10,000 d 5 h.
		{100 * time.Hour, "4d 4h"}, {(10_000*24 + 5) * time.Hour, "10,000d 5h"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %s, want %s", tt.d, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.00 KiB"}, {21 * 1024, "21.0 KiB"}, {1536 << 20, "1.50 GiB"},
		{999 << 30, "999 GiB"}, {5 << 40, "5.00 TiB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}
