// Package fit turns real runs into the simulator's sections for the
// gateway and the machine the runs crossed: capacity, network and
// detection. What it fits is meant to carry over to another storm on the
// same gateway and machine (other buckets, policies, client counts): the
// survivor's rates, the legs of a request and how their delays are shared,
// not the shape of the storms it was fitted on. It is pure: real runs in,
// model sections and the figures they come from out.
package fit

import (
	"errors"
	"fmt"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/models"
)

// Method says in words how the sections are fitted, for calibration.json.
const Method = "one fit on all the runs (the pooled model, calibrated.yaml) and the same fit on each run alone (the calibrated " +
	"model, calibrated-run-K.yaml, replication r taking run r mod K's: the lab's run-to-run spread); " +
	"capacity.admit_per_s = 1 / the mean gap between consecutive claim lines of the survivor while a backlog of " +
	"claims exists (the later handshake decided before the earlier one's line: the gap is pure claim work), over the " +
	"gaps that end in an admitted line; capacity.wasted_per_s the same over those that end in a claim_wasted line " +
	"(a claim done after its client had gone: no upgrade, hello or session follows), when 3 or more; " +
	"claims.contention: over windows of 25 ms tiled over the stretches of consecutive such gaps (the claim stage never idle), " +
	"the claims (useful and wasted) ending in each against the decisions in the survivor's log (claims', rejections' and " +
	"dropped handshakes') in it, by least squares, claims/ms = a + b x decisions/ms, as a line base_ms = 1/a, " +
	"per_decision_ms = -b/a (fixed windows, not the gaps themselves: a long gap holds more decisions only because it is long); " +
	"when both are positive the model takes the line instead of the mean: capacity.admit_per_s = 1 / base_ms and " +
	"capacity.decision_share = per_decision_ms (each decision inside a useful claim lengthens it by that); " +
	"capacity.decide_per_s (decide: arrival, reject_per_s 0: a rejection costs its decision only) = the median over " +
	"the runs of the larger of two lower bounds of the survivor's decision rate: the first wave's, 0.96 x its first " +
	"attempts / the time between the 2nd and 98th percentiles of their decisions (bounded by how fast the clients " +
	"send them: the initial jitter, the client process), and the backlog's, decisions / the time a backlog of " +
	"requests sent but not yet decided existed; the onset, the median over the runs of the 2nd percentile of the first " +
	"attempts' decisions after the kill, split in two: the median of the 2nd percentile of the clients' notices of " +
	"the kill, and the first clients' way, the rest: from a client's notice to its first attempt meeting the " +
	"decision stage, for a crash's reset and a drain's close alike; network.first_out = that way plus how late each " +
	"client's first attempt was sent after it was due (its notice plus the wait it drew; empirical, 101 quantiles, " +
	"over several runs the median of each), fixed at the way for runs that did not keep it; detection (reset): the lab's client process, " +
	"the clients' notices as measured (empirical, 101 quantiles, over several runs the median of each), or, for runs " +
	"that did not keep them, the 2nd percentile as a fixed delay; " +
	"decisions (measured, not taken): the same line for the decision stage, over 25 ms windows of the stretches " +
	"where a backlog of requests sent but not yet decided existed, decisions/ms against the claims ending in each, " +
	"base_ms + per_claim_ms x claims; " +
	"the stage spreads a wave over max(initial_jitter, clients / decide_per_s), a function of the client count; " +
	"network.out and .back: the legs of rejected retries, out = from when the retry was due (the previous answer " +
	"plus the wait then chosen) to the survivor's decision stage: the client's lateness plus the way, the send to " +
	"the 429 line for a retry that arrived (sent plus the run's fastest one-way time) with nothing sent before it " +
	"still undecided, and for one that arrived behind such a backlog, whose wait there the model's decision stage " +
	"makes, a calm retry's way, taken in turn in send order (the whole send to 429 line when a run has fewer than 3 " +
	"calm retries); back = from the 429 line to the answer; network.first_back the back legs of rejected first attempts; each a lognormal fitted by log-moments " +
	"(median exp(mean ln x), sigma sd(ln x), capped at the largest sample); server_time: per admitted handshake its " +
	"latency minus its own out leg, its time at the survivor (decision to admitted line) and the median back leg, " +
	"floored at 0.1 ms; reject_time 0; shared_every: per run, for every pair of rejected retries the difference of " +
	"their out legs as fitted, the upper edge of the widest run of send-gap bins (2, 5, 10, 25, 50, 100, 250 ms), from the " +
	"narrowest on, in which the median difference is at most half the median over all pairs; the median over the runs; " +
	"capacity.goaway_per_s, when the drain tells everyone at once: 0.96 x its clients / the time between the 2nd and " +
	"98th percentiles of their sessions' ends (the close 1001 after the goaway) after the SIGTERM (the gateway " +
	"writing goaways and closes as fast as it can, the clients reading them), the median over the runs; network.goaway, when the runs drained: per client the time from the drained gateway's goaway_sent line (when it computed the goaway's hint) to the client's session's end, empirical, 101 quantiles, over several runs the median of each; " +
	"network.drain_first_out, when the runs drained all at once: per run the median, over the drained clients whose first attempt was sent before the last drained session ended, of the time from that send to the fresh gateway's admission decision, one value per run (empirical over the runs' values, fixed for one)"

// minSamples is the fewest values a distribution or a rate is fitted to.
const minSamples = 3

// Fit is the fitted model with the figures it comes from. Times are
// milliseconds, rates per second.
type Fit struct {
	Method string `json:"method"`
	Model  Model  `json:"model"`

	Claims    Claims    `json:"claims"`
	FirstWave FirstWave `json:"first_wave"`
	// Decisions is the decisions' line beside the claims; nil when it
	// could not be fitted.
	Decisions *Decisions `json:"decisions,omitempty"`
	Legs      Legs       `json:"legs"`
	Shared    SharedEach `json:"shared"`
	Goaways   Goaways    `json:"goaways"`
	// Lab is the lab's own client process: its notices are the model's
	// detection.delay; it is none of the gateway's.
	Lab Lab `json:"lab"`
	// Runs is the same fit on each run alone: how steady the lab was.
	Runs []RunFit `json:"runs"`
}

// RunFit is the fit of one run alone.
type RunFit struct {
	Run   int    `json:"run"`
	Model *Model `json:"model,omitempty"` // nil: the run cannot be fitted alone (Error says why)
	Error string `json:"error,omitempty"`
}

// Runs fits the model to runs: one fit on all of them, and the same on
// each alone (Fit.Runs). It fails when the runs together do not have what
// a section needs (a backlog of claims, rejected retries).
func Runs(runs []*measured.Run) (Fit, error) {
	f, err := fitRuns(runs)
	if err != nil {
		return f, err
	}
	for _, r := range runs {
		one, err := fitRuns([]*measured.Run{r})
		rf := RunFit{Run: r.Run}
		if err != nil {
			rf.Error = err.Error()
		} else {
			rf.Model = &one.Model
		}
		f.Runs = append(f.Runs, rf)
	}
	return f, nil
}

// fitRuns is the one fit pipeline.
func fitRuns(runs []*measured.Run) (Fit, error) {
	f := Fit{Method: Method}
	if len(runs) == 0 {
		return f, errors.New("no real run to fit")
	}
	var err error
	if f.Claims, err = ClaimsOf(runs); err != nil {
		return f, err
	}
	if f.FirstWave, err = FirstWaveOf(runs); err != nil {
		return f, err
	}
	if f.Legs, err = fitLegs(runs); err != nil {
		return f, err
	}
	f.Shared = fitShared(runs)
	f.Goaways = fitGoaways(runs)
	f.Lab = LabOf(runs)
	firstOut, _ := f.FirstWave.FirstOut(f.Lab.FirstLateMs)
	f.Model = Model{
		Capacity: models.CapacitySpec{AdmitPerS: f.Claims.AdmitPerS, WastedPerS: f.Claims.WastedPerS, Decide: models.DecideOnArrival,
			DecidePerS: f.FirstWave.DecidePerS, GoawayPerS: f.Goaways.PerS},
		Network: models.NetworkSpec{ServerTime: f.Legs.ServerTime, RejectTime: &models.Distribution{Dist: models.DistFixed},
			OutLeg: &f.Legs.Out, BackLeg: &f.Legs.Back, FirstOutLeg: &firstOut,
			FirstBackLeg: &f.Legs.FirstBack, SharedEvery: f.Shared.Every, DrainFirstOut: f.Goaways.DrainFirstOut()},
		// The onset less the notice is the first attempt's way: a drained
		// client, which notices at its close, takes it too.
		Detection: models.DetectionSpec{Kind: models.DetectionReset, Delay: models.Distribution{Dist: models.DistFixed, Value: durationMs(f.FirstWave.NoticeMs)}},
	}
	if admit, share, ok := f.Claims.Contention.Share(); ok {
		f.Model.Capacity.AdmitPerS, f.Model.Capacity.DecisionShare = admit, share
	}
	// Measured, not taken: on the runs it was tried on, the line slowed the
	// model's first wave below the real one (docs/calibration.md).
	f.Decisions = DecisionsOf(runs)
	f.Model, _ = f.Model.WithLab(f.Lab)       // the notices themselves, when the runs kept them
	f.Model, _ = f.Model.WithGoawaysOf(f.Lab) // the goaways' way, when the runs drained
	f.Model, _ = f.Model.WithGoneOf(f.Lab)    // the departures' way, when the survivor dropped handshakes
	if err := f.Model.Validate(); err != nil {
		return f, fmt.Errorf("fitted model: %w", err)
	}
	return f, nil
}

// Quantiles are nearest-rank quantiles, ms.
type Quantiles = storm.Quantiles

// durationMs converts float milliseconds to a duration rounded to the
// microsecond, so that fitted parameters print readably.
func durationMs(v float64) time.Duration {
	return time.Duration(roundTo(v*1000, 1)) * time.Microsecond
}
