package solve

import (
	"fmt"
	"math"
	"slices"

	"stormsim/internal/human"
	"stormsim/models"
	"stormsim/sim"
)

// A first-order bound is the value of the key at which a requirement
// binds by the arithmetic a planner does by hand, leaving out backoff,
// jitter, detection and latency:
//
//   - everyone back within W: the survivors admit at most burst + rate x W
//     each in W (a token bucket), per_slot x W / slot (slots), claim
//     capacity x W (unlimited admission), so clients / survivors must fit;
//   - database peak under B rows/s: in the busiest second each survivor
//     admits up to rate + burst (per_slot x 1s / slot), each syncing
//     rows_per_sync rows;
//   - the storm ends (converged, not metastable) with unlimited admission:
//     the first wave's claims, clients / (survivors x claim capacity)
//     seconds of them, must be answered within the clients' handshake
//     timeout; with a token bucket, the bucket must not admit faster than
//     the survivors claim.
//
// survivors is gateways.count - 1 with a pool, else 1. How far the
// simulated answer lies from the bound is what the model adds.
type firstOrder struct {
	clients, survivors  float64
	bucket              bool    // a token bucket, else slots or unlimited
	rate, burst         float64 // per survivor, tokens/s and tokens
	slot                float64 // slots: the slot, seconds
	unlimited           bool
	rows                float64 // rows per sync; 0 without the database model
	claim               float64 // claim capacity per survivor per second; 0 without
	timeout             float64 // the clients' handshake timeout, seconds; 0 without
	rateKey, perSlotKey string
}

func newFirstOrder(s *sim.Scenario) firstOrder {
	f := firstOrder{clients: float64(s.Clients), survivors: 1}
	adm, prefix := s.Admission, "admission."
	if s.Gateways != nil {
		f.survivors = float64(s.Gateways.Count - 1)
		if s.Gateways.Admission != nil {
			adm, prefix = *s.Gateways.Admission, "gateways.admission."
		}
	}
	f.rateKey, f.perSlotKey = prefix+"rate", prefix+"per_slot"
	switch adm.Kind {
	case models.AdmissionTokenBucket:
		f.bucket, f.rate, f.burst = true, adm.Rate, float64(adm.Burst)
	case models.AdmissionSlots:
		f.slot = adm.Slot.Seconds()
	default:
		f.unlimited = true
	}
	if s.Database != nil {
		f.rows = float64(s.Database.RowsPerSync)
	}
	if s.Capacity != nil {
		f.claim = s.Capacity.AdmitPerS
	}
	for _, p := range s.Policies {
		if p.Timeout > 0 && (f.timeout == 0 || p.Timeout.Seconds() < f.timeout) {
			f.timeout = p.Timeout.Seconds()
		}
	}
	return f
}

// bound is requirement r's first-order bound on key, if one is known:
// the bound in the key's unit, the side the key must lie on, and the
// formula with its numbers.
func (f firstOrder) bound(key string, r Requirement) (x float64, side, formula string, ok bool) {
	field, op, b := r.Check.Metric.Field, r.Check.Op, r.Check.Bound
	upper := op == "<" || op == "<="
	n := func(v float64) string { return formatMetric(v, "") }
	switch {
	case field == "convergence_ms" && upper:
		w := b / 1000 // seconds
		switch {
		case key == f.rateKey && f.bucket:
			return (f.clients/f.survivors - f.burst) / w, ">=", fmt.Sprintf("(clients / survivors - burst) / window = (%s / %s - %s) / %s", n(f.clients), n(f.survivors), n(f.burst), human.Millis(b)), true
		case key == f.perSlotKey && f.slot > 0:
			return f.clients * f.slot / (f.survivors * w), ">=", fmt.Sprintf("clients x slot / (survivors x window) = %s x %s / (%s x %s)", n(f.clients), human.Millis(f.slot*1000), n(f.survivors), human.Millis(b)), true
		case key == "clients" && f.bucket:
			return f.survivors * (f.burst + f.rate*w), "<=", fmt.Sprintf("survivors x (burst + rate x window) = %s x (%s + %s x %s)", n(f.survivors), n(f.burst), n(f.rate), human.Millis(b)), true
		case key == "capacity.admit_per_s" && f.unlimited:
			return f.clients / (f.survivors * w), ">=", fmt.Sprintf("clients / (survivors x window) = %s / (%s x %s)", n(f.clients), n(f.survivors), human.Millis(b)), true
		}
	case field == "database.peak_rows_per_s" && upper && f.rows > 0:
		switch {
		case key == f.rateKey && f.bucket:
			return b/(f.survivors*f.rows) - f.burst, "<=", fmt.Sprintf("budget / (survivors x rows per sync) - burst = %s / (%s x %s) - %s", n(b), n(f.survivors), n(f.rows), n(f.burst)), true
		case key == f.perSlotKey && f.slot > 0:
			return b * f.slot / (f.survivors * f.rows), "<=", fmt.Sprintf("budget x slot / (survivors x rows per sync) = %s x %s / (%s x %s)", n(b), human.Millis(f.slot*1000), n(f.survivors), n(f.rows)), true
		case key == "database.rows_per_sync" && f.bucket:
			return b / (f.survivors * (f.rate + f.burst)), "<=", fmt.Sprintf("budget / (survivors x (rate + burst)) = %s / (%s x (%s + %s))", n(b), n(f.survivors), n(f.rate), n(f.burst)), true
		}
	case isOutcome(field) && f.claim > 0:
		switch {
		case f.unlimited && f.timeout > 0 && key == "capacity.admit_per_s":
			return f.clients / (f.survivors * f.timeout), ">=", fmt.Sprintf("clients / (survivors x timeout) = %s / (%s x %s)", n(f.clients), n(f.survivors), human.Millis(f.timeout*1000)), true
		case f.unlimited && f.timeout > 0 && key == "clients":
			return f.survivors * f.claim * f.timeout, "<=", fmt.Sprintf("survivors x claim capacity x timeout = %s x %s x %s", n(f.survivors), n(f.claim), human.Millis(f.timeout*1000)), true
		case f.bucket && key == f.rateKey:
			return f.claim, "<=", fmt.Sprintf("claim capacity = %s/s", n(f.claim)), true
		case f.bucket && key == "capacity.admit_per_s":
			return f.rate, ">=", fmt.Sprintf("bucket rate = %s/s", n(f.rate)), true
		}
	}
	return 0, "", "", false
}

// isOutcome reports whether field says whether the storm ended.
func isOutcome(field string) bool { return field == "converged" || field == "metastable" }

// firstOrderBounds are every case's first-order bounds, from its base
// scenario (no given value set), without the simulated ends.
func (p *Problem) firstOrderBounds() ([][]BoundDoc, error) {
	var out [][]BoundDoc
	for _, c := range p.cases {
		pr, err := p.build(c, combo{}, p.Domain.Min)
		if err != nil {
			return nil, err
		}
		f := newFirstOrder(pr.scenario)
		bounds := []BoundDoc{}
		for i, r := range p.Requirements {
			x, side, formula, ok := f.bound(p.Domain.Key, r)
			if ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
				bounds = append(bounds, BoundDoc{Requirement: i, Formula: formula, Bound: ValueDoc{Value: formatMetric(x, ""), X: x}, Side: side, Distance: nan})
			}
		}
		out = append(out, bounds)
	}
	return out, nil
}

// bounds are a case's first-order bounds, each beside the simulated end
// its requirement binds.
func (p *Problem) bounds(cr *caseRun) []BoundDoc {
	sol := cr.searches[0].s.result
	out := slices.Clone(p.firstOrder[cr.c.index])
	for k := range out {
		bd := &out[k]
		for _, e := range []End{sol.Low, sol.High} {
			if e.eval != nil && slices.Contains(e.Binding, bd.Requirement) {
				bd.Simulated = p.valuePtr(e.X)
				if bd.Bound.X != 0 {
					bd.Distance = Number((e.X - bd.Bound.X) / math.Abs(bd.Bound.X))
				}
			}
		}
	}
	return out
}
