package sim

import (
	"slices"
	"time"

	"stormsim/policies"
)

// MaxSharePasses bounds the runs a storm with a decision or a claim share
// (models.CapacitySpec.Shared) takes to find its fixed point.
const MaxSharePasses = 16

// ShareResult is how a storm with a decision share was found. A claim's
// length depends on the decisions made while it is in service, which are
// mostly those of attempts that arrive after the claim was booked, so
// the storm is run again and again: each run's claims are charged against
// the previous run's decisions (the first run's against none), until a
// run makes exactly the decisions it was charged against. That run is the
// result: every claim in it took 1/admit_per_s plus the share of the
// decisions of that very run inside it. A claim share needs no such
// search: the claims that can end inside a decision are those of the
// handshakes decided before it, already booked in the same run, so each
// decision is charged against its own run's claims as it is made.
type ShareResult struct {
	Passes int `json:"passes"` // runs made, the result's included
	// Settled is false when MaxSharePasses runs did not reach the fixed
	// point: the result is then the last run's, charged against the
	// run before it, and Moved says how far the two were apart.
	Settled bool `json:"settled"`
	// Moved counts the decisions, over every gateway, at which the
	// result's run and the run it was charged against differ: 0 when
	// settled.
	Moved int64 `json:"moved"`
}

// runShared runs a storm with a decision or a claim share to its fixed point
// (ShareResult). Every run reports its progress, with its Pass; a stop in
// any run stops the storm. Only the result's run is traced.
func runShared(s *Scenario, b *policies.Backoff, seed uint64, w wheel, trace func(attemptTrace), report func(Progress) bool) Result {
	var prior [][]time.Duration
	share := &ShareResult{}
	if report != nil {
		inner := report
		report = func(p Progress) bool {
			p.Pass = share.Passes
			return inner(p)
		}
	}
	for {
		st := newStorm(s, b, seed)
		for g, q := range st.queues {
			if prior != nil {
				q.ChargeAgainst(prior[g])
			}
		}
		share.Passes++
		if stopped := runStorm(st, w, report); stopped {
			return Result{}
		}
		made := make([][]time.Duration, len(st.queues))
		for g, q := range st.queues {
			made[g] = q.Decisions()
		}
		share.Moved = moved(prior, made)
		share.Settled = prior != nil && share.Moved == 0
		if share.Settled || share.Passes == MaxSharePasses {
			if trace != nil {
				// The same run again, traced: it is charged against the
				// same decisions, so it makes the same storm.
				st = newStorm(s, b, seed)
				for g, q := range st.queues {
					q.ChargeAgainst(prior[g])
				}
				st.trace = trace
				runStorm(st, w, nil)
			}
			res := st.result()
			res.Share = share
			return res
		}
		prior = made
	}
}

// moved counts the decisions at which two runs' decision times differ,
// gateway by gateway: the positions where both have one and they differ,
// and those only one has.
func moved(a, b [][]time.Duration) int64 {
	var n int64
	for g := range b {
		var x []time.Duration
		if a != nil {
			x = a[g]
		}
		y := b[g]
		if slices.Equal(x, y) {
			continue
		}
		common := min(len(x), len(y))
		for i := range common {
			if x[i] != y[i] {
				n++
			}
		}
		n += int64(max(len(x), len(y)) - common)
	}
	return n
}
