package models

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"stormsim/internal/param"
)

// DrainPaceKind names how a draining gateway tells its connections to
// leave (DrainPaceSpec.Kind): a rule, or a preset of one with a real
// server's documented defaults.
type DrainPaceKind string

// The paces and their presets.
const (
	PaceAll      DrainPaceKind = "all"       // every goaway at the drain's start: the seed's drain
	PaceBatches  DrainPaceKind = "batches"   // size connections every interval
	PaceSpread   DrainPaceKind = "spread"    // evenly over a window, or max_gap apart
	PaceLameDuck DrainPaceKind = "lame_duck" // a grace with no goaway, then spread
	PacePhoenix  DrainPaceKind = "phoenix"   // batches with Phoenix's PoolDrainer defaults
	PaceAnyCable DrainPaceKind = "anycable"  // spread with AnyCable-Go's slow drain
	PaceNATS     DrainPaceKind = "nats"      // lame_duck with nats-server's defaults
	PaceEnvoy    DrainPaceKind = "envoy"     // spread with Envoy's gradual drain
)

// DrainPaceSpec is the pace of a drain: when the draining gateway sends
// the goaway of each of its connections. Zero fields of a preset take the
// preset's defaults (DrainPaces).
type DrainPaceSpec struct {
	Kind     DrainPaceKind `yaml:"kind"`               // PaceAll (default), a rule or a preset
	Size     int           `yaml:"size,omitempty"`     // batches: connections told at once
	Interval time.Duration `yaml:"interval,omitempty"` // batches: from one batch to the next
	Over     time.Duration `yaml:"over,omitempty"`     // spread, lame_duck: the window the goaways spread over
	MaxGap   time.Duration `yaml:"max_gap,omitempty"`  // spread, lame_duck: at most this from one goaway to the next
	Grace    time.Duration `yaml:"grace,omitempty"`    // lame_duck: the wait before the first goaway
}

// DrainPaceInfo describes one pace: its formula (i is a connection's
// place in the drain's order from 0, n the connections the gateway holds
// when it starts draining) and, for a preset, the documented defaults.
type DrainPaceInfo struct {
	Name     DrainPaceKind
	Rule     DrainPaceKind // the rule a preset applies (its own name for a rule)
	Formula  string
	Defaults DrainPaceSpec
	// Shutdown is the time the server gives a whole drain (0 for a rule):
	// a scenario's drain grace defaults to it when the pace is the preset.
	Shutdown time.Duration
	Source   string
}

// DrainPaces lists the paces in display order: the rules, then the
// presets.
var DrainPaces = []DrainPaceInfo{
	{Name: PaceAll, Rule: PaceAll, Formula: "goaway_i = 0"},
	{Name: PaceBatches, Rule: PaceBatches, Formula: "goaway_i = floor(i/size) * interval"},
	{Name: PaceSpread, Rule: PaceSpread, Formula: "W = min(over, n*max_gap) (either alone); goaway_i = floor(i*W/n)"},
	{Name: PaceLameDuck, Rule: PaceLameDuck, Formula: "goaway_i = grace + floor(i*W/n), W as for spread"},
	{Name: PacePhoenix, Rule: PaceBatches, Formula: "batches",
		Defaults: DrainPaceSpec{Size: 10_000, Interval: 2 * time.Second}, Shutdown: 30 * time.Second,
		Source: "Phoenix.Socket.PoolDrainer (Phoenix 1.7 socket drainer option): batch_size 10_000, batch_interval 2_000 ms, shutdown 30_000 ms"},
	{Name: PaceAnyCable, Rule: PaceSpread, Formula: "spread",
		Defaults: DrainPaceSpec{Over: 30 * time.Second, MaxGap: 500 * time.Millisecond}, Shutdown: 30 * time.Second,
		Source: "AnyCable-Go --shutdown_slowdrain: disconnects spread over --shutdown_timeout (30 s), at most 500 ms apart"},
	{Name: PaceNATS, Rule: PaceLameDuck, Formula: "lame_duck",
		Defaults: DrainPaceSpec{Grace: 10 * time.Second, Over: 2 * time.Minute, MaxGap: time.Second}, Shutdown: 2*time.Minute + 10*time.Second,
		Source: "nats-server lame duck mode: lame_duck_grace_period 10 s, then eviction over lame_duck_duration (2 min), at most 1 s between clients (nats-io/gnatsd#817)"},
	{Name: PaceEnvoy, Rule: PaceSpread, Formula: "spread",
		Defaults: DrainPaceSpec{Over: 600 * time.Second}, Shutdown: 600 * time.Second,
		Source: "Envoy --drain-strategy gradual: GOAWAY spread over --drain-time-s (600 s); Istio sets 45 s"},
}

// MaxPaceDuration bounds every duration of a pace and a hint: a day, the
// simulator's safety horizon, so that no product of them overflows.
const MaxPaceDuration = 24 * time.Hour

// paceInfo returns kind's entry of DrainPaces.
func paceInfo(kind DrainPaceKind) (DrainPaceInfo, bool) {
	for _, p := range DrainPaces {
		if p.Name == kind {
			return p, true
		}
	}
	return DrainPaceInfo{}, false
}

// Rule is the rule the pace applies: its kind, or the rule of its preset.
func (p DrainPaceSpec) Rule() DrainPaceKind {
	if info, ok := paceInfo(p.Kind); ok {
		return info.Rule
	}
	return p.Kind
}

// Shutdown is the preset's drain budget, 0 for a rule.
func (p DrainPaceSpec) Shutdown() time.Duration {
	info, _ := paceInfo(p.Kind)
	return info.Shutdown
}

// Paced reports whether the pace tells connections at different times:
// any pace but all.
func (p DrainPaceSpec) Paced() bool { return p.Rule() != PaceAll && p.Kind != "" }

// Validate fills in a preset's defaults and checks the spec; errors are
// *param.Error naming the key. A parameter the pace has no use for is an
// error, not ignored.
func (p *DrainPaceSpec) Validate() error {
	if p.Kind == "" {
		p.Kind = PaceAll
	}
	info, ok := paceInfo(p.Kind)
	if !ok {
		return &param.Error{Key: "kind", Problem: "must be all, batches, spread, lame_duck, phoenix, anycable, nats or envoy", Got: p.Kind}
	}
	d := info.Defaults
	if p.Size == 0 {
		p.Size = d.Size
	}
	if p.Interval == 0 {
		p.Interval = d.Interval
	}
	if p.Over == 0 {
		p.Over = d.Over
	}
	if p.MaxGap == 0 {
		p.MaxGap = d.MaxGap
	}
	if p.Grace == 0 {
		p.Grace = d.Grace
	}
	for _, f := range []struct {
		key string
		v   time.Duration
	}{{"interval", p.Interval}, {"over", p.Over}, {"max_gap", p.MaxGap}, {"grace", p.Grace}} {
		if f.v < 0 || f.v > MaxPaceDuration {
			return &param.Error{Key: f.key, Problem: fmt.Sprintf("must be in [0, %v]", MaxPaceDuration), Got: f.v}
		}
	}
	if p.Size < 0 || p.Size > math.MaxInt32 {
		return &param.Error{Key: "size", Problem: fmt.Sprintf("must be in [1, %d]", math.MaxInt32), Got: p.Size}
	}
	unused := func(key string, set bool) error {
		if set {
			return &param.Error{Key: key, Problem: fmt.Sprintf("has no use in pace %s: remove it", info.Rule), Got: "set"}
		}
		return nil
	}
	var err error
	switch info.Rule {
	case PaceAll:
		for _, u := range []struct {
			key string
			set bool
		}{{"size", p.Size != 0}, {"interval", p.Interval != 0}, {"over", p.Over != 0}, {"max_gap", p.MaxGap != 0}, {"grace", p.Grace != 0}} {
			if err == nil {
				err = unused(u.key, u.set)
			}
		}
	case PaceBatches:
		switch {
		case p.Size < 1:
			return &param.Error{Key: "size", Problem: "must be >= 1 (connections told at once)", Got: p.Size}
		case p.Interval <= 0:
			return &param.Error{Key: "interval", Problem: "must be > 0 (use pace all for a single batch)", Got: p.Interval}
		}
		err = firstErr(unused("over", p.Over != 0), unused("max_gap", p.MaxGap != 0), unused("grace", p.Grace != 0))
	case PaceSpread, PaceLameDuck:
		if p.Over == 0 && p.MaxGap == 0 {
			return &param.Error{Key: "over", Problem: "over or max_gap must be > 0", Got: p.Over}
		}
		err = firstErr(unused("size", p.Size != 0), unused("interval", p.Interval != 0))
		if info.Rule == PaceSpread && err == nil {
			err = unused("grace", p.Grace != 0)
		}
	}
	return err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// GoawayAt is when connection i of n (0 <= i < n, in the drain's order)
// gets its goaway, from the drain's start, by the pace's formula
// (DrainPaces), in integer nanoseconds, each division rounding down:
//
//	all        0
//	batches    floor(i/size) * interval
//	spread     floor(i * W / n),         W = min(over, n*max_gap)
//	lame_duck  grace + floor(i * W / n)
//
// with W = over when max_gap is 0 and n*max_gap when over is 0. A time
// beyond MaxPaceDuration times the connections is capped there. The spec
// must be valid.
func (p DrainPaceSpec) GoawayAt(i, n int) time.Duration {
	if i <= 0 || n <= 0 {
		if p.Rule() == PaceLameDuck {
			return p.Grace
		}
		return 0
	}
	switch p.Rule() {
	case PaceBatches:
		return mulCapped(uint64(i/p.Size), uint64(p.Interval))
	case PaceSpread:
		return p.spreadAt(i, n)
	case PaceLameDuck:
		return p.Grace + p.spreadAt(i, n)
	}
	return 0
}

// spreadAt is floor(i * W / n), W the spread's window for n connections.
func (p DrainPaceSpec) spreadAt(i, n int) time.Duration {
	w := p.Over
	if p.MaxGap > 0 {
		if gaps := mulCapped(uint64(n), uint64(p.MaxGap)); w == 0 || gaps < w {
			w = gaps
		}
	}
	hi, lo := bits.Mul64(uint64(i), uint64(w))
	if hi >= uint64(n) { // only when i > n: the quotient would not fit
		return w
	}
	q, _ := bits.Div64(hi, lo, uint64(n))
	return time.Duration(q)
}

// mulCapped is a*b nanoseconds, capped at the largest time.Duration.
func mulCapped(a, b uint64) time.Duration {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 || lo > math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(lo)
}

// Span is when the last of n connections gets its goaway: GoawayAt(n-1, n).
func (p DrainPaceSpec) Span(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return p.GoawayAt(n-1, n)
}

// String writes the pace as ParseDrainPace reads it (cmd/gateway's
// --drain-pace): the kind, then every parameter that is set.
func (p DrainPaceSpec) String() string {
	return specString(string(p.Kind), []specField{
		{"size", intValue(p.Size)}, {"interval", durationValue(p.Interval)}, {"over", durationValue(p.Over)},
		{"max_gap", durationValue(p.MaxGap)}, {"grace", durationValue(p.Grace)}})
}

// ParseDrainPace reads a pace written as KIND or KIND:KEY=VALUE,...
// ("batches:size=1000,interval=1s", "phoenix") and validates it.
func ParseDrainPace(s string) (DrainPaceSpec, error) {
	var p DrainPaceSpec
	kind, fields, err := parseSpec(s)
	if err != nil {
		return p, err
	}
	p.Kind = DrainPaceKind(kind)
	for _, f := range fields {
		switch f.key {
		case "size":
			err = f.int(&p.Size)
		case "interval":
			err = f.duration(&p.Interval)
		case "over":
			err = f.duration(&p.Over)
		case "max_gap":
			err = f.duration(&p.MaxGap)
		case "grace":
			err = f.duration(&p.Grace)
		default:
			err = &param.Error{Key: f.key, Problem: "unknown key (want size, interval, over, max_gap or grace)", Got: f.value}
		}
		if err != nil {
			return p, err
		}
	}
	return p, p.Validate()
}
