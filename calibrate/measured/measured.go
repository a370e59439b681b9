// Package measured is what a real storm measured: the record the lab
// writes and the fit and the comparison read. Times are milliseconds from
// the phase's origin (the SIGKILL of the failed gateway for the crash
// storm, the SIGTERM of the survivor for the drain) unless a name says
// otherwise. It does no I/O.
package measured

import (
	"net/http"
	"slices"

	"stormsim/gateway/protocol"
	"stormsim/gateway/storm"
	"stormsim/internal/quantile"
)

// Run is one real storm against real gateway processes. New measurements
// (a storm cut off at a horizon, its goodput) are new fields beside the
// ones here; readers take what they know.
type Run struct {
	Run  int    `json:"run"`  // 1-based
	Seed uint64 `json:"seed"` // the clients' draws: the seed of simulated replication Run-1
	Load Load   `json:"load"` // the machine while it ran

	BaselineRoutes int64         `json:"baseline_routes"` // clients' routes on the failed gateway before the kill
	Crash          storm.Summary `json:"crash"`           // client side, attempts at the midpoint of sent and answered
	// Decisions is the crash storm counted where the simulator counts it,
	// at the survivor's admission decisions; the comparison uses it.
	Decisions Series `json:"decisions"`
	// ReclaimMs is from the SIGKILL to the survivor's sweep of the failed
	// gateway's routes; ReclaimedRoutes what that sweep deleted (the
	// witness's route at least).
	ReclaimMs       float64 `json:"reclaim_ms"`
	ReclaimedRoutes int64   `json:"reclaimed_routes"`
	// NoticeMs is, per client, the time from the SIGKILL until it saw its
	// connection end.
	NoticeMs storm.Quantiles `json:"notice_ms"`
	// FirstNoticeMs is the 2nd percentile of those times: when the first
	// clients (but the fastest few) had noticed; 0 in runs measured before
	// it was kept.
	FirstNoticeMs float64 `json:"first_notice_ms,omitempty"`
	// NoticePointsMs are those times at 0, 1, ..., 100 % (nearest rank,
	// NoticePoints of them): how the lab's one client process got through
	// its connections' resets, the more of them the longer. Empty in runs
	// measured before they were kept.
	NoticePointsMs []float64 `json:"notice_points_ms,omitempty"`
	Gateway429     int64     `json:"gateway_429"` // the survivor's rejected{reason="429"} counter
	// GonePointsMs are, for the handshakes the survivor dropped unclaimed
	// (--abandoned skip), the time from each one's client's deadline (its
	// send plus the policy's timeout) to the survivor's abandoned line, at
	// 0, 1, ..., 100 % (nearest rank): how long after a client gave up its
	// gateway knew (network.gone). Empty with none dropped, or for runs
	// measured before they were kept.
	GonePointsMs []float64 `json:"gone_points_ms,omitempty"`
	// FirstLatePointsMs are, per client, how late its first attempt of
	// the storm was sent, ms after it was due (its notice plus the wait it
	// drew then), at 0, 1, ..., 100 % (nearest rank): the one client
	// process firing its timers late, the more clients the later. Empty
	// in runs measured before they were kept.
	FirstLatePointsMs   []float64 `json:"first_late_points_ms,omitempty"`
	GatewayAdmitted     int64     `json:"gateway_admitted"`      // its admitted counter
	GatewayPeakAccepted int64     `json:"gateway_peak_accepted"` // its most admissions in any window-long interval
	RoutesOnSurvivor    int64     `json:"routes_on_survivor"`    // clients' routes on the survivor after the storm
	Head                int64     `json:"head"`                  // the conversation's head

	Drain *Drain `json:"drain,omitempty"` // nil: the scenario has no drain
	// Deploy is a rolling deploy of the pool, when the scenario is one:
	// the crash storm's fields are then empty.
	Deploy *storm.DeploySummary `json:"deploy,omitempty"`
	// DeployExits are each drained gateway's exit codes, DeployRoutesLeft
	// the routes a drained gateway held in the database after it exited,
	// summed over the drains.
	DeployExits      []int `json:"deploy_exits,omitempty"`
	DeployRoutesLeft int64 `json:"deploy_routes_left,omitempty"`
	// DeployDecisions is the deploy counted at its gateways' admission
	// decisions, every process's, where the simulator counts it.
	DeployDecisions *Series `json:"deploy_decisions,omitempty"`
	// DeployGoawayLegsMs are, per drained session of the deploy, the time
	// from its gateway writing the goaway (its goaway_sent line) to the
	// client's session's end, ms: network.goaway at the deploy's own
	// connections per gateway, over every drain.
	DeployGoawayLegsMs []float64 `json:"deploy_goaway_legs_ms,omitempty"`

	// Outcome is how the crash storm ended at the scenario's horizon; nil
	// when the scenario has none (the storm was watched until everyone was
	// back).
	Outcome *Outcome `json:"outcome,omitempty"`

	// Handshakes are the crash storm's answered attempts; Claims the
	// survivor's admitted handshakes and RejectsMs its 429 decisions: the
	// fit's input.
	Handshakes []Handshake `json:"handshakes"`
	Claims     []Claim     `json:"claims"`
	RejectsMs  []float64   `json:"rejects_ms"`
	// AbandonedMs are the survivor's decisions, ms, of the handshakes it
	// admitted and then dropped unclaimed, its client gone (abandoned:
	// skip): with Claims' and RejectsMs every decision it logged.
	AbandonedMs []float64 `json:"abandoned_ms,omitempty"`
}

// NoticePoints is how many quantiles of the clients' notices a run keeps
// (Run.NoticePointsMs): every percent, both ends included.
const NoticePoints = 101

// PointsOf returns NoticePoints nearest-rank quantiles of values, at
// i/(NoticePoints-1) for i = 0 ... NoticePoints-1 (0 % the least); nil
// for no values.
func PointsOf(values []float64) []float64 {
	if len(values) == 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(values))
	points := make([]float64, NoticePoints)
	for i := range points {
		points[i] = quantile.NearestRank(sorted, float64(i)/(NoticePoints-1))
	}
	return points
}

// Handshake is one answered attempt of a real storm.
type Handshake struct {
	Device        string  `json:"device"`
	DeviceAttempt int64   `json:"device_attempt"` // the counter sent as ?attempt=
	Attempt       int     `json:"attempt"`        // 1-based within the client's round
	Status        int     `json:"status"`         // 101, 429, 503, ...
	SentMs        float64 `json:"sent_ms"`        // when the client sent it
	LatencyMs     float64 `json:"latency_ms"`     // sent to answered, client side
	// LagMs, for a retry, is how much later than its client planned it was
	// sent: sent - (the previous answer + the wait then chosen), the
	// client's own delay in waking up (its timer, its turn for a CPU).
	LagMs float64 `json:"lag_ms,omitempty"`
	// GatewayMs, for an admitted attempt the survivor logged, is its time
	// there from the admission decision to the admitted line: the wait for
	// and the work of the route claim.
	GatewayMs *float64 `json:"gateway_ms,omitempty"`
	// OutMs, when the survivor's decision on the attempt is known, is the
	// time from its send to that decision; LatencyMs - OutMs is the way
	// back.
	OutMs *float64 `json:"out_ms,omitempty"`
}

// Admitted reports whether the attempt was answered 101.
func (h Handshake) Admitted() bool { return h.Status == http.StatusSwitchingProtocols }

// Refused reports whether it was turned away for want of capacity (429) or
// by a draining gateway (503): a retry follows.
func (h Handshake) Refused() bool {
	return h.Status == protocol.StatusTooManyRequests || h.Status == protocol.StatusServiceUnavailable
}

// DecidedMs is when the survivor decided the attempt, if known.
func (h Handshake) DecidedMs() (float64, bool) {
	if h.OutMs == nil {
		return 0, false
	}
	return h.SentMs + *h.OutMs, true
}

// Claim is one route claim of the survivor: its admission decision and
// its admitted line (written after the route claim and the upgrade), or,
// for a wasted claim, its claim_wasted line (written when the claim
// completed after its client had gone). An admitted claim whose client
// gave up before its hello arrived is wasted too.
type Claim struct {
	Device    string  `json:"device"`
	Attempt   int64   `json:"attempt"` // the device's attempt counter
	DecidedMs float64 `json:"decided_ms"`
	DoneMs    float64 `json:"done_ms"`
	Wasted    bool    `json:"wasted,omitempty"`
}

// Outcome is how a real storm ended at its horizon, by the simulator's
// rule (models.Judge, fed as the simulator feeds it): converged when every
// client was back before the horizon; metastable when not, and over the
// last tenth of the horizon the survivor had claims in hand (decided and
// not yet done) at least 90 % of the time while fewer than 10 % of the
// claims it completed there were useful; unfinished otherwise. Counts are
// of what happened before the horizon.
type Outcome struct {
	Outcome    string  `json:"outcome"` // converged, metastable or unfinished
	Converged  bool    `json:"converged"`
	Metastable bool    `json:"metastable"`
	HorizonMs  float64 `json:"horizon_ms"`
	Connected  int64   `json:"connected"`   // clients back by the horizon
	TimedOut   int64   `json:"timed_out"`   // attempts the clients gave up on at their timeout
	Useful     int64   `json:"useful"`      // claims done for a client that was still there (admitted lines)
	Wasted     int64   `json:"wasted"`      // claims done after their client had gone (claim_wasted lines)
	Skipped    int64   `json:"skipped"`     // handshakes dropped unclaimed, their client gone (abandoned lines)
	Shed       int64   `json:"shed"`        // answered 503 at once for a full claim queue (client side)
	TailBusy   float64 `json:"tail_busy"`   // fraction of the last tenth with claims in hand
	TailUseful float64 `json:"tail_useful"` // useful fraction of the claims done in the last tenth
	// Goodput and Wasted count useful and wasted claims per window, by
	// when they were done: the simulator's series of the same names.
	GoodputSeries []int64 `json:"goodput"`
	WastedSeries  []int64 `json:"wasted_series"`
}

// Drain is the drain of the survivor to a fresh gateway.
type Drain struct {
	Summary    storm.Summary `json:"summary"`
	ExitCode   int           `json:"exit_code"`   // the drained gateway's
	GoawaySent int64         `json:"goaway_sent"` // from its drain_done line
	// GoawayFailed is how many goaways the drained gateway could not
	// write (drain_done's failed_goaways; each a goaway_failed line in its
	// log with the error): those clients learned of the drain from the
	// 1001 close alone.
	GoawayFailed   int64 `json:"goaway_failed,omitempty"`
	LeftoverRoutes int64 `json:"leftover_routes"` // released at the end of the drain (drain_done)
	RoutesLeft     int64 `json:"routes_left"`     // its routes in the database after it exited
	RoutesOnDest   int64 `json:"routes_on_dest"`  // clients' routes on the fresh gateway
	// Pace and Hint are what the drained gateway was told
	// (--drain-pace, --reconnect-hint) when the scenario has a drain
	// section: the drain is then judged as the storm is. Empty: the seed's
	// drain, reported only.
	Pace string `json:"pace,omitempty"`
	Hint string `json:"hint,omitempty"`
	// GoawaysMs are the clients' goaways as they received them, ms from
	// the SIGTERM: how fast the gateway got them out.
	GoawaysMs []float64 `json:"goaways_ms,omitempty"`
	// ClosesMs are when the clients' drained sessions ended (the close
	// 1001 after their goaway, as they read it), ms from the SIGTERM: when
	// each client began its reconnect.
	ClosesMs []float64 `json:"closes_ms,omitempty"`
	// GoawayLegsMs are, per drained client, the time from the drained
	// gateway writing its goaway (its goaway_sent line, when the hint was
	// computed) to the client's session's end, ms: network.goaway.
	GoawayLegsMs []float64 `json:"goaway_legs_ms,omitempty"`
	// WritesMs are when the drained gateway wrote its goaways (its
	// goaway_sent lines), ms from the SIGTERM: how fast it got them out,
	// apart from their way to the clients.
	WritesMs []float64 `json:"writes_ms,omitempty"`
	// BusyWaysMs are, per drained client whose first attempt after its
	// goaway was sent before the last drained session ended, the time
	// from that send to the fresh gateway's admission decision, ms: the
	// way of a first attempt while the drain still loads the machine
	// (network.drain_first_out). Attempts the gateway refused are left
	// out: their decision is not on the clock of the sends.
	BusyWaysMs []float64 `json:"busy_ways_ms,omitempty"`
	// Decisions is the drain counted where the simulator counts it, at
	// the fresh gateway's admission decisions; the comparison uses it.
	Decisions *Series `json:"decisions,omitempty"`
}

// Load is the machine around a real run: the real storm shares it, and
// what other work takes from it shows in every latency. CPU is in cores
// (1 = one core busy the whole time).
type Load struct {
	// Measured is false where /proc cannot be read: the CPU figures below
	// are then 0 and the run cannot be judged.
	Measured  bool    `json:"measured"`
	Average1m float64 `json:"load_average_1m"` // /proc/loadavg before the run (everything's, this program's included)
	// OtherBeforeCores is the CPU used by other work in the second before
	// the run, OtherDuringCores during the crash storm: everything but
	// this program, its gateways and PostgreSQL.
	OtherBeforeCores float64 `json:"other_before_cores"`
	// WaitedMs is how long the run waited for other work to calm down
	// before it began (see lab.Lab.WaitQuiet).
	WaitedMs         float64 `json:"waited_ms,omitempty"`
	OtherDuringCores float64 `json:"other_during_cores"`
	// OwnDuringCores is this program's (the clients') and its gateways'
	// CPU during the crash storm; DatabaseCores PostgreSQL's (its work for
	// the storm, and anyone else's).
	OwnDuringCores float64 `json:"own_during_cores"`
	DatabaseCores  float64 `json:"database_cores"`
	// ClientsCores is the part of OwnDuringCores that this program took:
	// the storm's clients, all in one process on the lab's machine (and
	// the lab following the gateways' logs). Real clients are separate
	// devices: this is the lab's, not the gateway's.
	ClientsCores float64 `json:"clients_cores"`
	// Cores is how many CPUs the machine has; BusyCores how many of them
	// everything kept busy during the crash storm, on average.
	Cores     int     `json:"cores"`
	BusyCores float64 `json:"busy_cores"`
	// Disturbed is set when other work took more than the lab's threshold
	// before or during the storm: the run measured the machine's other
	// work as much as the gateway.
	Disturbed bool `json:"disturbed"`
}

// NearestRank returns the p50, p90, p99 and max of values by the
// project's one quantile rule (internal/quantile), as the simulator and
// the storm driver report them; all 0 for none.
func NearestRank(values []float64) storm.Quantiles {
	v := slices.Sorted(slices.Values(values))
	return storm.Quantiles{P50: quantile.NearestRank(v, 0.5), P90: quantile.NearestRank(v, 0.9),
		P99: quantile.NearestRank(v, 0.99), Max: quantile.NearestRank(v, 1)}
}

// Check is one of the seed lab's checks on a real run.
type Check struct {
	Run      int    `json:"run"`
	Kind     string `json:"kind"` // the seed's: normal, recovery, bound
	Name     string `json:"name"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Pass     bool   `json:"pass"`
}

// AddClaim counts a claim done in window i (i >= 0) in the goodput or the
// wasted series.
func (o *Outcome) AddClaim(i int, wasted bool) {
	series := &o.GoodputSeries
	if wasted {
		series = &o.WastedSeries
	}
	grow(series, i)
	(*series)[i]++
}

// FinishSeries pads the goodput and wasted series to one length.
func (o *Outcome) FinishSeries() {
	n := max(len(o.GoodputSeries), len(o.WastedSeries))
	o.GoodputSeries, o.WastedSeries = pad(o.GoodputSeries, n), pad(o.WastedSeries, n)
}

// Merge adds o's windows to s's (the decisions of several gateways).
func (s *Series) Merge(o Series) {
	for i, v := range o.Attempts {
		grow(&s.Attempts, i)
		s.Attempts[i] += v
	}
	for i, v := range o.Accepts {
		grow(&s.Accepts, i)
		s.Accepts[i] += v
	}
	for i, v := range o.Rejects {
		grow(&s.Rejects, i)
		s.Rejects[i] += v
	}
	s.Finish()
}
