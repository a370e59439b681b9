package lab

import (
	"fmt"
	"math"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
)

// ReclaimSlack widens the analytic reclaim bound for a real run: two
// processes' ticker jitter, the sweep's DELETE and the log write on a
// loaded 2-core machine (the gateway's own SIGKILL test uses the same).
const ReclaimSlack = 150 * time.Millisecond

// Checks are the seed document's checks ("The lab experiment and its
// results") on one real run of plan p.
func Checks(p Plan, r *measured.Run) []measured.Check {
	if r.Deploy != nil {
		return deployChecks(p, r)
	}
	n := int64(p.Clients)
	c := r.Crash
	var out []measured.Check
	add := func(kind, name, expected, observed string, pass bool) {
		out = append(out, measured.Check{Run: r.Run, Kind: kind, Name: name, Expected: expected, Observed: observed, Pass: pass})
	}
	add("normal", "baseline routes", fmt.Sprintf("%d routes on %s before the fault", n, GatewayFailed),
		fmt.Sprint(r.BaselineRoutes), r.BaselineRoutes == n)
	lo, hi := p.ReclaimLo-ReclaimSlack, p.ReclaimHi+ReclaimSlack
	add("recovery", "reclaim inside bound", fmt.Sprintf("kill to sweep in [%v, %v] ± %v", p.ReclaimLo, p.ReclaimHi, ReclaimSlack),
		fmt.Sprintf("%.0f ms (%d routes)", r.ReclaimMs, r.ReclaimedRoutes), r.ReclaimMs >= ms(lo) && r.ReclaimMs <= ms(hi) && r.ReclaimedRoutes >= 1)
	// A storm the horizon cut has its outcome instead: it cannot be all
	// back, and its clients' counts stop at the horizon while the
	// gateway's go on.
	cut := r.Outcome != nil && !r.Outcome.Converged
	if !cut {
		add("recovery", "all back on the survivor at head",
			fmt.Sprintf("%d routes on %s, %d clients at head %d", n, GatewaySurvivor, n, r.Head),
			fmt.Sprintf("%d routes, %d at head, %d reconnected, %d stopped", r.RoutesOnSurvivor, c.AtHead, c.Reconnected, c.Stopped),
			r.RoutesOnSurvivor == n && int64(c.AtHead) == n && int64(c.Reconnected) == n && c.Stopped == 0)
	}
	// With a handshake timeout, an answer can come after the client gave
	// up: the client counts a timeout where the gateway counted a 429, and
	// an accept placed by its client's send and timed-out answer lands in
	// no reliable window. The gateway's own counts stay exact.
	timeouts := p.Policy.Timeout > 0
	if !math.IsInf(p.AcceptBound, 1) {
		if !timeouts {
			expected, observed, pass := clientAcceptCheck(p, &c.Series, c.PeakAcceptsPerWindow, c.HandshakeMs.Max)
			add("bound", "accept peak per window", expected, observed, pass)
		}
		add("bound", "gateway admissions in any window", fmt.Sprintf("at most %g in any %v (gw-b's decision times)", p.AcceptBound, p.Window),
			fmt.Sprint(r.GatewayPeakAccepted), float64(r.GatewayPeakAccepted) <= p.AcceptBound)
	}
	switch {
	case cut:
	case timeouts:
		add("bound", "client and gateway 429 counts", "client <= gateway <= client + timeouts",
			fmt.Sprintf("client %d, gateway %d, timeouts %d", c.Client429, r.Gateway429, c.TimedOut),
			c.Client429 <= r.Gateway429 && r.Gateway429 <= c.Client429+c.TimedOut)
	default:
		add("bound", "client and gateway 429 counts", "equal", fmt.Sprintf("client %d, gateway %d", c.Client429, r.Gateway429),
			c.Client429 == r.Gateway429)
	}
	if d := r.Drain; d != nil {
		s := d.Summary
		add("normal", "drain", fmt.Sprintf("exit 0; goaway and 1001 to all %d; no route of %s left; all on %s", n, GatewaySurvivor, GatewayDrainDest),
			fmt.Sprintf("exit %d; goaway %d (sent %d, failed to write %d); 1001 %d; routes left %d; %d on %s, %d at head",
				d.ExitCode, s.Goaways, d.GoawaySent, d.GoawayFailed, s.Closes["1001"], d.RoutesLeft, d.RoutesOnDest, GatewayDrainDest, s.AtHead),
			d.ExitCode == 0 && s.Goaways == n && d.GoawaySent == n && s.Closes["1001"] == n && d.RoutesLeft == 0 &&
				d.RoutesOnDest == n && int64(s.AtHead) == n)
	}
	return out
}

// clientAcceptCheck judges the client side's accepts window by window:
// window i may hold clientAcceptBound of its own accepts' longest
// handshake, so a window of short answers is held to nearly gw-b's bound
// while one the clients' process answered late is allowed its reach. A
// series written before it kept its accepts' handshakes (no
// AcceptHandshakeMaxMs) is judged on its peak against the phase's longest
// handshake.
func clientAcceptCheck(p Plan, s *storm.Series, peak int64, longestHandshakeMs float64) (expected, observed string, pass bool) {
	if len(s.AcceptHandshakeMaxMs) != len(s.Accepts) || len(s.Accepts) == 0 {
		bound, reach := clientAcceptBound(p, longestHandshakeMs)
		return fmt.Sprintf("at most %.0f per %v window (client side; decided within %v of it)", bound, p.Window, reach),
			fmt.Sprint(peak), float64(peak) <= bound
	}
	over, peakAt := 0, -1
	var peakBound float64
	var peakReach time.Duration
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, a := range s.Accepts {
		if a == 0 {
			continue
		}
		bound, reach := clientAcceptBound(p, s.AcceptHandshakeMaxMs[i])
		lo, hi = min(lo, bound), max(hi, bound)
		if float64(a) > bound {
			over++
		}
		if peakAt < 0 || a > s.Accepts[peakAt] {
			peakAt, peakBound, peakReach = i, bound, reach
		}
	}
	if peakAt < 0 {
		return "no window over gw-b's bound (client side)", "no accepts", true
	}
	expected = fmt.Sprintf("each %v window at most gw-b's bound over it widened on each side by half its accepts' longest handshake, +1 (client side; %.0f to %.0f)",
		p.Window, lo, hi)
	observed = fmt.Sprintf("peak %d in window %d, of %.0f there (decided within %v of it); %d windows over",
		s.Accepts[peakAt], peakAt, peakBound, peakReach, over)
	return expected, observed, over == 0
}

// clientAcceptBound is the most accepts the client side may place in one
// window of plan p, given the longest answered handshake of the phase
// (ms). The client places an accept at the midpoint of its send and its
// answer, and the gateway decided it somewhere between the two: within
// reach, half the longest handshake (whole ms, up), of where it is placed. A window's
// accepts were therefore decided in the window widened by reach on each
// side, in which gw-b admits at most its bound for that length, plus one
// for the seed's allowance (it allowed 21 for 20). At 4,000 clients the
// clients' own process answers 100 ms late and more, and a bound of the
// window alone would fail runs whose gateway kept its own.
func clientAcceptBound(p Plan, longestHandshakeMs float64) (bound float64, reach time.Duration) {
	reach = time.Duration(math.Ceil(longestHandshakeMs/2)) * time.Millisecond // up: a bound errs wide
	return math.Floor(p.Admission.New().WindowBound(p.Window+2*reach)) + 1, reach
}
