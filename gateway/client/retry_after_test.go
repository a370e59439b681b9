package client

import (
	"errors"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	// Sun, 06 Nov 1994 08:49:37 GMT is RFC 9110's own example date.
	now := time.Date(1994, time.November, 6, 8, 49, 30, 0, time.UTC)
	tests := []struct {
		name    string
		value   string
		want    time.Duration
		wantErr bool
	}{
		{"absent", "", 0, false},
		{"zero seconds", "0", 0, false},
		{"one second", "1", time.Second, false},
		{"two minutes", "120", 2 * time.Minute, false},
		{"leading zeros are digits", "007", 7 * time.Second, false},
		{"beyond the clamp", "86400", MaxRetryAfter, false},
		{"overflowing int64", "99999999999999999999999", MaxRetryAfter, false},
		{"IMF-fixdate 7 s ahead", "Sun, 06 Nov 1994 08:49:37 GMT", 7 * time.Second, false},
		{"obsolete RFC 850 date", "Sunday, 06-Nov-94 08:49:37 GMT", 7 * time.Second, false},
		{"obsolete asctime date", "Sun Nov  6 08:49:37 1994", 7 * time.Second, false},
		{"date in the past", "Sun, 06 Nov 1994 08:49:00 GMT", 0, false},
		{"date a day ahead is clamped", "Mon, 07 Nov 1994 08:49:30 GMT", MaxRetryAfter, false},
		{"negative", "-1", 0, true},
		{"fraction", "1.5", 0, true},
		{"unit", "5s", 0, true},
		{"word", "soon", 0, true},
		{"date without zone", "Sun, 06 Nov 1994 08:49:37", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRetryAfter(tt.value, now)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, error %v", tt.value, got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadRetryAfter) {
				t.Errorf("error %v does not wrap ErrBadRetryAfter", err)
			}
		})
	}
}
