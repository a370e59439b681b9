package policies

import (
	"time"

	"stormsim/internal/param"
	"stormsim/internal/suggest"
	"stormsim/policies/rng"
)

// Spec is a policy as configured: its kind (Name), parameters and the
// client-side rules every policy shares. Zero fields take the kind's
// defaults (see Kinds).
type Spec struct {
	Kind                KindName      `yaml:"name"`                   // the policy's kind, e.g. KindFull
	Label               string        `yaml:"label"`                  // result name; defaults to the kind
	Base                time.Duration `yaml:"base"`                   // first ceiling or fixed delay
	Cap                 time.Duration `yaml:"cap"`                    // largest ceiling
	Multiplier          float64       `yaml:"multiplier"`             // growth per failure (>= 1)
	Jitter              float64       `yaml:"jitter"`                 // randomization factor of presets, in [0, 1]
	MinGap              time.Duration `yaml:"min_gap"`                // delay of the none policy
	MaxAttempts         int           `yaml:"max_attempts"`           // give up after this many attempts; 0 = never
	HonorRetryAfter     bool          `yaml:"honor_retry_after"`      // wait at least the server's Retry-After
	MinDelayAfterReject time.Duration `yaml:"min_delay_after_reject"` // client-side floor after a rejection
	// Timeout is the handshake timeout: an attempt whose answer has not
	// reached the client this long after it was sent is abandoned then,
	// counts as a failed attempt and starts the backoff (with no
	// Retry-After). 0 means none: every answer is waited for.
	Timeout time.Duration `yaml:"timeout,omitempty"`
}

// KindName names a policy kind (Spec.Kind); the config writes it as the
// policy's name.
type KindName string

// The policy kinds.
const (
	KindNone         KindName = "none"
	KindFixed        KindName = "fixed"
	KindExponential  KindName = "exponential"
	KindFull         KindName = "full"
	KindEqual        KindName = "equal"
	KindDecorrelated KindName = "decorrelated"
	KindGRPC         KindName = "grpc"
	KindSocketIO     KindName = "socketio"
	KindCenkalti     KindName = "cenkalti"
)

// KindInfo describes one policy kind: its formula and its defaults.
type KindInfo struct {
	Name     KindName
	Formula  string
	Defaults Spec   // parameters used when the Spec leaves them zero
	Source   string // where preset defaults come from
	// LibraryTimeout is the handshake (connect) timeout the preset's
	// library documents, 0 when it has none. It is listed, not applied:
	// a policy times out only when its timeout is set.
	LibraryTimeout time.Duration
	TimeoutSource  string // where LibraryTimeout comes from
}

// KindNames are the names of Kinds, in their order.
func KindNames() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k.Name)
	}
	return names
}

// Kinds lists every policy kind in display order.
var Kinds = []KindInfo{
	{Name: KindNone, Formula: "delay = min_gap", Defaults: Spec{}},
	{Name: KindFixed, Formula: "delay = base", Defaults: Spec{}},
	{Name: KindExponential, Formula: "delay = min(cap, base*multiplier^n)", Defaults: Spec{Multiplier: 2}},
	{Name: KindFull, Formula: "delay = uniform[0, min(cap, base*multiplier^n))", Defaults: Spec{Multiplier: 2}},
	{Name: KindEqual, Formula: "c = min(cap, base*multiplier^n); delay = c/2 + uniform[0, c/2)", Defaults: Spec{Multiplier: 2}},
	{Name: KindDecorrelated, Formula: "delay = min(cap, uniform[base, 3*prev)), prev starts at base", Defaults: Spec{}},
	{Name: KindGRPC, Formula: "c = min(cap, base*multiplier^n); delay = c + uniform[-jitter*c, jitter*c)",
		Defaults:       Spec{Base: time.Second, Multiplier: 1.6, Cap: 120 * time.Second, Jitter: 0.2},
		Source:         "grpc/grpc doc/connection-backoff.md: INITIAL_BACKOFF=1s, MULTIPLIER=1.6, JITTER=0.2, MAX_BACKOFF=120s",
		LibraryTimeout: 20 * time.Second, TimeoutSource: "grpc/grpc doc/connection-backoff.md: MIN_CONNECT_TIMEOUT=20s"},
	{Name: KindSocketIO, Formula: "ms = base*multiplier^n; dev = floor(r*jitter*ms); ms = ms ± dev (sign from floor(r*10) odd); delay = min(cap, ms)",
		Defaults:       Spec{Base: time.Second, Multiplier: 2, Cap: 5 * time.Second, Jitter: 0.5},
		Source:         "socket.io-client Manager defaults: reconnectionDelay=1000, reconnectionDelayMax=5000, randomizationFactor=0.5; backo2 factor=2",
		LibraryTimeout: 20 * time.Second, TimeoutSource: "socket.io-client Manager defaults: timeout=20000"},
	{Name: KindCenkalti, Formula: "c = min(cap, base*multiplier^n); delay = uniform[c*(1-jitter), c*(1+jitter)]",
		Defaults:      Spec{Base: 500 * time.Millisecond, Multiplier: 1.5, Cap: 60 * time.Second, Jitter: 0.5},
		Source:        "github.com/cenkalti/backoff ExponentialBackOff: DefaultInitialInterval=500ms, DefaultMultiplier=1.5, DefaultMaxInterval=60s, DefaultRandomizationFactor=0.5",
		TimeoutSource: "a backoff library: its caller sets the timeout"},
}

// LookupKind returns the kind called name.
func LookupKind(name KindName) (KindInfo, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return KindInfo{}, false
}

// WithDefaults returns s with every zero parameter replaced by its kind's
// default. Unknown kinds are returned unchanged.
func (s Spec) WithDefaults() Spec {
	k, ok := LookupKind(s.Kind)
	if !ok {
		return s
	}
	d := k.Defaults
	if s.Base == 0 {
		s.Base = d.Base
	}
	if s.Cap == 0 {
		s.Cap = d.Cap
	}
	if s.Multiplier == 0 {
		s.Multiplier = d.Multiplier
	}
	if s.Jitter == 0 {
		s.Jitter = d.Jitter
	}
	if s.Label == "" {
		s.Label = string(s.Kind)
	}
	return s
}

// Backoff is a validated policy with the client-side rules common to all
// policies. The simulator and the real client both call Next.
type Backoff struct {
	Spec   Spec // with defaults applied
	Policy Policy

	// full is Policy's ceilings when it is full jitter, nil otherwise:
	// Next then draws without a call through the interface, which on a
	// plain storm costs as much as the draw.
	full *Ceilings
}

// New validates s (after defaults) and builds its Backoff. Every parameter
// rule lives here, once.
func New(s Spec) (*Backoff, error) {
	s = s.WithDefaults()
	kind, ok := LookupKind(s.Kind)
	if !ok {
		problem := "unknown policy (see `stormsim policies`)"
		if best, ok := suggest.Closest(string(s.Kind), KindNames()); ok {
			problem = "unknown policy; did you mean " + best + "? (see `stormsim policies`)"
		}
		return nil, &param.Error{Key: "name", Problem: problem, Got: s.Kind}
	}
	if s.MaxAttempts < 0 {
		return nil, &param.Error{Key: "max_attempts", Problem: "must be >= 0", Got: s.MaxAttempts}
	}
	if s.MinDelayAfterReject < 0 {
		return nil, &param.Error{Key: "min_delay_after_reject", Problem: "must be >= 0", Got: s.MinDelayAfterReject}
	}
	if s.Timeout < 0 {
		return nil, &param.Error{Key: "timeout", Problem: "must be >= 0 (0: no handshake timeout)", Got: s.Timeout}
	}
	var p Policy
	switch kind.Name {
	case KindNone:
		if s.MinGap <= 0 {
			return nil, &param.Error{Key: "min_gap", Problem: "must be > 0 for policy none, or retries would loop within one instant", Got: s.MinGap}
		}
		return &Backoff{Spec: s, Policy: None{MinGap: s.MinGap}}, nil
	case KindFixed:
		if s.Base <= 0 {
			return nil, &param.Error{Key: "base", Problem: "must be > 0", Got: s.Base}
		}
		return &Backoff{Spec: s, Policy: Constant{Base: s.Base}}, nil
	}
	if s.Base <= 0 {
		return nil, &param.Error{Key: "base", Problem: "must be > 0", Got: s.Base}
	}
	if s.Cap < s.Base {
		return nil, &param.Error{Key: "cap", Problem: "must be >= base (" + s.Base.String() + ")", Got: s.Cap}
	}
	if kind.Name != KindDecorrelated && (s.Multiplier < 1 || s.Multiplier > 1000) {
		return nil, &param.Error{Key: "multiplier", Problem: "must be in [1, 1000]", Got: s.Multiplier}
	}
	if s.Jitter < 0 || s.Jitter > 1 {
		return nil, &param.Error{Key: "jitter", Problem: "must be in [0, 1]", Got: s.Jitter}
	}
	m, j := FixedFrom(s.Multiplier), FixedFrom(s.Jitter)
	switch kind.Name {
	case KindExponential:
		p = Exponential{NewCeilings(s.Base, s.Cap, m)}
	case KindFull:
		p = FullJitter{NewCeilings(s.Base, s.Cap, m)}
	case KindEqual:
		p = EqualJitter{NewCeilings(s.Base, s.Cap, m)}
	case KindDecorrelated:
		p = Decorrelated{Base: s.Base, Cap: s.Cap}
	case KindGRPC:
		p = GRPC{Ceilings: NewCeilings(s.Base, s.Cap, m), Jitter: j}
	case KindSocketIO:
		// Beyond 2*cap even the largest downward deviation stays above cap.
		p = SocketIO{Ceilings: NewCeilings(s.Base, 2*s.Cap, m), Jitter: j, MaxCap: s.Cap}
	case KindCenkalti:
		p = Cenkalti{Ceilings: NewCeilings(s.Base, s.Cap, m), Jitter: j}
	}
	b := &Backoff{Spec: s, Policy: p}
	if f, ok := p.(FullJitter); ok {
		b.full = &f.Ceilings
	}
	return b, nil
}

// Next returns how long a client waits after failed attempt number attempts
// (1-based, so attempts-1 earlier failures), given the policy's previous raw
// delay prev, the server's Retry-After (0 if none) and random bits u
// (rng.Draw(seed, client, attempts, rng.StreamBackoff)). raw is the policy's own
// delay, to pass back as prev; giveUp is true once max_attempts is used up.
func (b *Backoff) Next(attempts int, prev, retryAfter time.Duration, u uint64) (wait, raw time.Duration, giveUp bool) {
	if b.Spec.MaxAttempts > 0 && attempts >= b.Spec.MaxAttempts {
		return 0, prev, true
	}
	if b.full != nil {
		raw = fullJitter(b.full, attempts-1, u)
	} else {
		raw = b.Policy.Delay(attempts-1, prev, u)
	}
	wait = max(raw, b.Spec.MinDelayAfterReject)
	if b.Spec.HonorRetryAfter {
		wait = max(wait, retryAfter)
	}
	return wait, raw, false
}

// FullJitterOnly reports whether Next's wait is the full-jitter delay
// alone for a server Retry-After of retryAfter: full jitter without
// max_attempts, min_delay_after_reject or a Retry-After to honour. Then
// NextFull gives that wait, and never gives up.
func (b *Backoff) FullJitterOnly(retryAfter time.Duration) bool {
	return b.full != nil && b.Spec.MaxAttempts == 0 && b.Spec.MinDelayAfterReject <= 0 && (!b.Spec.HonorRetryAfter || retryAfter <= 0)
}

// NextFull is Next's wait for a FullJitterOnly backoff, small enough to be
// inlined where a storm makes its attempts: the wait after failed attempt
// number attempts (1-based) with random bits u.
func (b *Backoff) NextFull(attempts int, u uint64) time.Duration {
	return fullJitter(b.full, attempts-1, u)
}

// MaxWait bounds every wait Next can return for a server Retry-After of
// retryAfter.
func (b *Backoff) MaxWait(retryAfter time.Duration) time.Duration {
	w := max(b.Policy.MaxDelay(), b.Spec.MinDelayAfterReject)
	if b.Spec.HonorRetryAfter {
		w = max(w, retryAfter)
	}
	return w
}

// InitialWait is the wait before a client's first attempt: uniform on
// [0, jitter), drawn from rng.StreamInitial.
func InitialWait(seed, client uint64, jitter time.Duration) time.Duration {
	return rng.UniformDuration(rng.Draw(seed, client, 0, rng.StreamInitial), jitter)
}

// FirstWait is the wait before a round's first attempt: the reconnect hint
// of the goaway that began the round when it carried one (hinted), else
// InitialWait. The hint replaces the initial jitter rather than adding to
// it: the gateway has already spread its clients (a reserved hint is a
// slot of its admission), and a jitter on top would bunch them again.
// Backoff after a failed attempt is the policy's, Retry-After included.
func FirstWait(seed, client uint64, jitter, hint time.Duration, hinted bool) time.Duration {
	if hinted {
		return hint
	}
	return InitialWait(seed, client, jitter)
}
