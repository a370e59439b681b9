package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// MaxRetryAfter bounds a parsed Retry-After, so that a broken or hostile
// value cannot park a client for days or overflow a time.Duration.
const MaxRetryAfter = time.Hour

// ParseRetryAfter interprets a Retry-After field value (RFC 9110 10.2.3):
// either delay-seconds (1*DIGIT) or an HTTP-date, which is measured from now
// and counts as 0 once past. An empty value means no Retry-After (0, nil).
// Values beyond MaxRetryAfter are clamped to it. Anything else is an error
// and a 0 delay.
func ParseRetryAfter(value string, now time.Time) (time.Duration, error) {
	if value == "" {
		return 0, nil
	}
	if isDigits(value) {
		secs, err := strconv.ParseInt(value, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			// All digits, so the only possible error is overflow.
			return MaxRetryAfter, nil
		}
		return time.Duration(secs) * time.Second, nil
	}
	// http.ParseTime accepts the three date forms RFC 9110 5.6.7 requires a
	// recipient to accept: IMF-fixdate, RFC 850 and asctime.
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, fmt.Errorf("%w: neither delay-seconds nor an HTTP-date (got %q)", ErrBadRetryAfter, value)
	}
	d := at.Sub(now)
	switch {
	case d < 0:
		return 0, nil
	case d > MaxRetryAfter:
		return MaxRetryAfter, nil
	}
	return d, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ErrBadRetryAfter is wrapped by ParseRetryAfter's errors. The client then
// waits as if no Retry-After had been sent and reports the error with the
// attempt.
var ErrBadRetryAfter = errors.New("bad Retry-After")
