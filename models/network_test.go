package models

import (
	"strings"
	"testing"
	"time"
)

// TestNetworkBack: rtt 40 ms and server time 10 ms; an admitted attempt's
// answer comes 40/2 + 10 = 30 ms after it arrives, and with a reject time
// of 0 a rejected one's after 40/2 = 20 ms. Without a reject time both take
// 30 ms, as Legs says.
func TestNetworkBack(t *testing.T) {
	fixed := func(d time.Duration) Distribution { return Distribution{Dist: "fixed", Value: d} }
	zero := fixed(0)
	cases := []struct {
		name     string
		net      NetworkSpec
		admitted bool
		want     time.Duration
	}{
		{"admitted, no reject time", NetworkSpec{RTT: fixed(40 * time.Millisecond), ServerTime: fixed(10 * time.Millisecond)}, true, 30 * time.Millisecond},
		{"rejected, no reject time", NetworkSpec{RTT: fixed(40 * time.Millisecond), ServerTime: fixed(10 * time.Millisecond)}, false, 30 * time.Millisecond},
		{"admitted, reject time 0", NetworkSpec{RTT: fixed(40 * time.Millisecond), ServerTime: fixed(10 * time.Millisecond), RejectTime: &zero}, true, 30 * time.Millisecond},
		{"rejected, reject time 0", NetworkSpec{RTT: fixed(40 * time.Millisecond), ServerTime: fixed(10 * time.Millisecond), RejectTime: &zero}, false, 20 * time.Millisecond},
		{"odd rtt keeps the longer half on the way back", NetworkSpec{RTT: fixed(3), ServerTime: fixed(10), RejectTime: &zero}, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.net.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := c.net.Back(1, 2, 3, c.admitted); got != c.want {
				t.Errorf("Back = %v, want %v", got, c.want)
			}
		})
	}
}

// TestNetworkRejectTimeBounds: MaxRoundTrip covers the slower of the two
// server times, and a bad reject time is reported under its key.
func TestNetworkRejectTimeBounds(t *testing.T) {
	slow := Distribution{Dist: "uniform", Min: 0, Max: 50 * time.Millisecond}
	n := NetworkSpec{RTT: Distribution{Value: 10 * time.Millisecond}, ServerTime: Distribution{Value: 20 * time.Millisecond}, RejectTime: &slow}
	if got, want := n.MaxRoundTrip(), 60*time.Millisecond; got != want {
		t.Errorf("MaxRoundTrip = %v, want %v", got, want)
	}
	for i := uint64(0); i < 1000; i++ {
		out, _ := n.Legs(1, i, 1)
		if back := n.Back(1, i, 1, false); out+back > n.MaxRoundTrip() {
			t.Fatalf("attempt %d: %v + %v exceeds MaxRoundTrip %v", i, out, back, n.MaxRoundTrip())
		}
	}
	bad := Distribution{Dist: "lognormal", Median: 0, Sigma: 1}
	n.RejectTime = &bad
	if err := n.Validate(); err == nil || !strings.HasPrefix(err.Error(), "reject_time.median:") {
		t.Errorf("Validate = %v, want a reject_time.median error", err)
	}
	if (&NetworkSpec{RejectTime: &Distribution{}}).IsZero() != true {
		t.Error("all-zero network with a zero reject time is not zero")
	}
}

// TestNetworkFirstAttempt: with a first rtt of 100 ms and a first server
// time of 70 ms, attempt 1 travels 50 ms out and 50 + 70 ms back; attempt 2
// uses the 40 ms rtt and 10 ms server time; MaxRoundTrip covers the slower.
func TestNetworkFirstAttempt(t *testing.T) {
	first, firstServer := Distribution{Value: 100 * time.Millisecond}, Distribution{Value: 70 * time.Millisecond}
	n := NetworkSpec{RTT: Distribution{Value: 40 * time.Millisecond}, ServerTime: Distribution{Value: 10 * time.Millisecond},
		FirstRTT: &first, FirstServerTime: &firstServer}
	cases := []struct {
		attempt   uint64
		out, back time.Duration
	}{
		{1, 50 * time.Millisecond, 120 * time.Millisecond},
		{2, 20 * time.Millisecond, 30 * time.Millisecond},
	}
	for _, c := range cases {
		if out, back := n.Legs(7, 3, c.attempt); out != c.out || back != c.back || n.Back(7, 3, c.attempt, true) != c.back {
			t.Errorf("attempt %d: legs %v, %v; want %v, %v", c.attempt, out, back, c.out, c.back)
		}
	}
	if got := n.MaxRoundTrip(); got != 170*time.Millisecond {
		t.Errorf("MaxRoundTrip = %v, want 170ms", got)
	}
	bad := Distribution{Dist: "uniform", Min: 2, Max: 1}
	n.FirstRTT = &bad
	if err := n.Validate(); err == nil || !strings.HasPrefix(err.Error(), "first_rtt.max:") {
		t.Errorf("Validate = %v, want a first_rtt.max error", err)
	}
	n.FirstRTT, n.FirstServerTime = nil, &bad
	if err := n.Validate(); err == nil || !strings.HasPrefix(err.Error(), "first_server_time.max:") {
		t.Errorf("Validate = %v, want a first_server_time.max error", err)
	}
}
