package models

import (
	"math"
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
			if got := c.net.Back(1, 2, 3, c.admitted, 0); got != c.want {
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
		if back := n.Back(1, i, 1, false, 0); out+back > n.MaxRoundTrip() {
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

// TestNetworkMeasuredLegs: rtt 40 ms, server time 10 ms, reject time 0.
// A set leg replaces its half of the rtt (20 ms), for first attempts too
// unless a first leg is set, which applies to attempt 1 alone; MaxRoundTrip
// is the largest out, the largest back and the largest server time.
func TestNetworkMeasuredLegs(t *testing.T) {
	ms := time.Millisecond
	fixed := func(v time.Duration) *Distribution { return &Distribution{Value: v * ms} } // v in ms
	base := func() NetworkSpec {
		return NetworkSpec{RTT: *fixed(40), ServerTime: *fixed(10), RejectTime: fixed(0)}
	}
	cases := []struct {
		name                string
		set                 func(*NetworkSpec)
		attempt             uint64
		out, back, rejected time.Duration // rejected: Back of a rejected attempt
		maxRoundTrip        time.Duration
	}{
		{"rtt halves", func(*NetworkSpec) {}, 1, 20, 30, 20, 50},
		{"out only", func(n *NetworkSpec) { n.OutLeg = fixed(35) }, 2, 35, 30, 20, 65},
		{"back only", func(n *NetworkSpec) { n.BackLeg = fixed(5) }, 2, 20, 15, 5, 35},
		{"both legs", func(n *NetworkSpec) { n.OutLeg, n.BackLeg = fixed(35), fixed(5) }, 2, 35, 15, 5, 50},
		// A bound over both kinds of attempt: the first out (80) and the
		// later back (20) plus the server time.
		{"first legs, first attempt", func(n *NetworkSpec) { n.FirstOutLeg, n.FirstBackLeg = fixed(80), fixed(15) }, 1, 80, 25, 15, 110},
		{"first legs, later attempt", func(n *NetworkSpec) { n.FirstOutLeg, n.FirstBackLeg = fixed(80), fixed(15) }, 2, 20, 30, 20, 110},
		{"all four, first attempt", func(n *NetworkSpec) {
			n.OutLeg, n.BackLeg, n.FirstOutLeg, n.FirstBackLeg = fixed(35), fixed(5), fixed(80), fixed(15)
		}, 1, 80, 25, 15, 105},
		{"all four, later attempt", func(n *NetworkSpec) {
			n.OutLeg, n.BackLeg, n.FirstOutLeg, n.FirstBackLeg = fixed(35), fixed(5), fixed(80), fixed(15)
		}, 3, 35, 15, 5, 105},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := base()
			c.set(&n)
			if err := n.Validate(); err != nil {
				t.Fatal(err)
			}
			out, back := n.Legs(1, 2, c.attempt)
			if out != c.out*ms || back != c.back*ms || n.Out(1, 2, c.attempt, 0) != c.out*ms {
				t.Errorf("legs %v, %v, Out %v; want %v, %v", out, back, n.Out(1, 2, c.attempt, 0), c.out*ms, c.back*ms)
			}
			if got := n.Back(1, 2, c.attempt, false, 0); got != c.rejected*ms {
				t.Errorf("rejected Back = %v, want %v", got, c.rejected*ms)
			}
			if got := n.MaxRoundTrip(); got != c.maxRoundTrip*ms {
				t.Errorf("MaxRoundTrip = %v, want %v", got, c.maxRoundTrip*ms)
			}
		})
	}
}

// TestNetworkMeasuredLegDraws: a lognormal leg draws from its own stream,
// so the rtt halves of the other leg are those of the same attempt without
// it, and every draw stays within MaxRoundTrip.
func TestNetworkMeasuredLegDraws(t *testing.T) {
	rtt := Distribution{Dist: "lognormal", Median: 30 * time.Millisecond, Sigma: 0.8, Cap: 300 * time.Millisecond}
	plain := NetworkSpec{RTT: rtt}
	withOut := NetworkSpec{RTT: rtt, OutLeg: &Distribution{Dist: "lognormal", Median: 50 * time.Millisecond, Sigma: 0.9, Cap: 400 * time.Millisecond}}
	differs := 0
	for c := uint64(0); c < 1000; c++ {
		o0, b0 := plain.Legs(9, c, 2)
		o1, b1 := withOut.Legs(9, c, 2)
		if b1 != b0 {
			t.Fatalf("client %d: back %v with an out leg, %v without", c, b1, b0)
		}
		if o1 != o0 {
			differs++
		}
		if o1+b1 > withOut.MaxRoundTrip() {
			t.Fatalf("client %d: %v + %v exceeds MaxRoundTrip %v", c, o1, b1, withOut.MaxRoundTrip())
		}
	}
	if differs < 990 {
		t.Errorf("out leg equals the rtt half for %d of 1000 clients", 1000-differs)
	}
}

// TestNetworkMeasuredLegErrors: a bad leg is reported under its key, and a
// network with only zero legs is zero.
func TestNetworkMeasuredLegErrors(t *testing.T) {
	bad := &Distribution{Dist: "lognormal", Median: time.Millisecond, Sigma: 0}
	for _, c := range []struct {
		key string
		set func(*NetworkSpec)
	}{
		{"out", func(n *NetworkSpec) { n.OutLeg = bad }},
		{"first_out", func(n *NetworkSpec) { n.FirstOutLeg = bad }},
		{"back", func(n *NetworkSpec) { n.BackLeg = bad }},
		{"first_back", func(n *NetworkSpec) { n.FirstBackLeg = bad }},
		{"goaway", func(n *NetworkSpec) { n.GoawayLeg = bad }},
		{"gone", func(n *NetworkSpec) { n.GoneLeg = bad }},
	} {
		var n NetworkSpec
		c.set(&n)
		if err := n.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.key+".sigma:") {
			t.Errorf("%s: Validate = %v, want a %s.sigma error", c.key, err, c.key)
		}
	}
	if !(&NetworkSpec{OutLeg: &Distribution{}, BackLeg: &Distribution{}}).IsZero() {
		t.Error("network with zero legs is not zero")
	}
	if (&NetworkSpec{FirstOutLeg: &Distribution{Value: 1}}).IsZero() {
		t.Error("network with a first out leg is zero")
	}
}

// TestNetworkSharedEvery: with shared_every 10 ms, attempts of different
// clients sent at 3 and 7 ms draw the same out leg, one sent at 12 ms its
// own; answers leaving in one interval the same back leg; server time stays
// each attempt's own. Without it each attempt draws its own legs.
func TestNetworkSharedEvery(t *testing.T) {
	ms := time.Millisecond
	n := NetworkSpec{OutLeg: &Distribution{Dist: "uniform", Min: 0, Max: 100 * ms}, BackLeg: &Distribution{Dist: "uniform", Min: 0, Max: 100 * ms},
		ServerTime: Distribution{Dist: "uniform", Min: 0, Max: 100 * ms}, SharedEvery: 10 * ms}
	if a, b := n.Out(1, 10, 2, 3*ms), n.Out(1, 20, 5, 7*ms); a != b {
		t.Errorf("out legs in one interval differ: %v, %v", a, b)
	}
	if a, c := n.Out(1, 10, 2, 3*ms), n.Out(1, 10, 2, 12*ms); a == c {
		t.Errorf("out legs in two intervals alike: %v", a)
	}
	sharedBack := func(c uint64) time.Duration {
		kc, ka := n.drawKey(c, 2, 4*ms)
		d := n.Draws(1)
		_, back := d.oneWay(2, kc, ka)
		return back
	}
	if sharedBack(10) != sharedBack(20) {
		t.Error("back legs in one interval differ")
	}
	if n.Back(1, 10, 2, true, 4*ms)-sharedBack(10) == n.Back(1, 20, 2, true, 4*ms)-sharedBack(20) {
		t.Error("server times of two clients alike")
	}
	own := n
	own.SharedEvery = 0
	if own.Out(1, 10, 2, 3*ms) == own.Out(1, 20, 5, 7*ms) {
		t.Error("without shared_every two attempts draw the same out leg")
	}
	if err := (&NetworkSpec{SharedEvery: -ms}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "shared_every:") {
		t.Errorf("negative shared_every: %v", err)
	}
}

// TestDrainOut: a drained client's first attempt takes drain_first_out
// while its drain is busy, one draw for the drain (every client of drain
// 0 alike, drain 1 its own), and the retries' out leg once the drain is
// done (the rtt's half without one); without drain_first_out it is Out.
func TestDrainOut(t *testing.T) {
	ms := time.Millisecond
	busyWay := &Distribution{Dist: DistUniform, Min: 10 * ms, Max: 500 * ms}
	n := &NetworkSpec{RTT: Distribution{Dist: DistFixed, Value: 8 * ms}, OutLeg: &Distribution{Dist: DistFixed, Value: 3 * ms},
		FirstOutLeg: &Distribution{Dist: DistFixed, Value: 7 * ms}, DrainFirstOut: busyWay}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	d := n.Draws(1)
	w0 := d.DrainOut(1, 0, 0, true, 1)
	if w0 < 10*ms || w0 > 500*ms || d.DrainOut(2, 0, 40*ms, true, 1) != w0 {
		t.Errorf("drain 0: clients 1 and 2 wait %v and %v, want one draw in [10ms, 500ms]", w0, d.DrainOut(2, 0, 40*ms, true, 1))
	}
	if w1 := d.DrainOut(1, 1, 0, true, 1); w1 == w0 {
		t.Errorf("drains 0 and 1 both wait %v, want a draw each", w0)
	}
	if got := d.DrainOut(1, 0, 0, true, 0.25); got != time.Duration(math.Round(float64(w0)*0.25)) {
		t.Errorf("drain 0 at a quarter of the full rate: %v, want a quarter of %v", got, w0)
	}
	if got := d.DrainOut(1, 0, 0, false, 1); got != 3*ms {
		t.Errorf("after the drain: %v, want the out leg, 3ms", got)
	}
	n.OutLeg = nil
	if d := n.Draws(1); d.DrainOut(1, 0, 0, false, 1) != 4*ms {
		got := d.DrainOut(1, 0, 0, false, 1)
		t.Errorf("after the drain, no out leg: %v, want rtt/2, 4ms", got)
	}
	n.DrainFirstOut = nil
	if d := n.Draws(1); d.DrainOut(1, 0, 0, true, 1) != 7*ms {
		got := d.DrainOut(1, 0, 0, true, 1)
		t.Errorf("without drain_first_out: %v, want first_out, 7ms", got)
	}
	if (&NetworkSpec{DrainFirstOut: busyWay}).Independent() {
		t.Error("with drain_first_out a first attempt's way depends on its send: not independent")
	}
	bad := &NetworkSpec{DrainFirstOut: &Distribution{Dist: DistFixed, Value: -ms}}
	if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "drain_first_out.") {
		t.Errorf("a negative drain_first_out: %v, want an error naming drain_first_out", err)
	}
}
