package gateway

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"stormsim/internal/param"
	"stormsim/models"
)

// RejectionLog says how refused handshakes are logged.
type RejectionLog string

const (
	// RejectionSummary logs one "rejections" line per RejectionSummaryEvery
	// with the counts per reason (each refusal at debug level): a flood
	// costs one line a second, not one per request.
	RejectionSummary RejectionLog = "summary"
	// RejectionEach logs one "rejected" line per refusal, for harnesses
	// that rebuild the timeline of every decision (calibration).
	RejectionEach RejectionLog = "each"
)

// Config is a gateway's configuration. Durations are wall-clock intervals
// measured on the local monotonic clock unless stated otherwise.
type Config struct {
	// ID names the gateway in routes, leases and kicks; unique per live
	// gateway, no '|'.
	ID string
	// Lease is how long a renewal keeps the gateway alive on the database
	// clock (seed: 1500ms).
	Lease time.Duration
	// Ping is the WebSocket ping interval (seed: 500ms); 0 disables pings.
	Ping time.Duration
	// Idle closes a connection (4002) after this long without any frame or
	// pong from the client, counted from the upgrade (seed: 3000ms); 0
	// disables.
	Idle time.Duration
	// AdmitRate is the token bucket refill in handshakes per second; 0 means
	// unlimited admission.
	AdmitRate float64
	// AdmitBurst is the token bucket capacity in handshakes.
	AdmitBurst int
	// SourceRate, if > 0, is a token bucket per source address (IPv4
	// address, IPv6 /64) checked before the admission bucket, in handshakes
	// per second: one source flooding bad credentials then takes at most
	// its own share of admission tokens. 0 disables it.
	SourceRate float64
	// SourceBurst is each source bucket's capacity in handshakes.
	SourceBurst int
	// RetryAfter is carried by 429 and 503 answers, rounded up to whole
	// seconds on the wire (the header has no finer unit).
	RetryAfter time.Duration
	// Abandoned is what happens to a handshake whose client left before its
	// claim, the model's capacity.abandoned. With models.AbandonedSkip the
	// gateway checks, while the handshake waits for a claim slot or a
	// database connection and once more before claiming, whether its client
	// is still there (the request's connection not closed), and drops it
	// unclaimed if not (gateway_handshakes_abandoned_total). With
	// models.AbandonedServe it claims whatever the client did: the wait and
	// the claim run on a context the client's departure does not cancel. In
	// both modes a claim that completes after its client left is not
	// upgraded (gateway_claims_wasted_total).
	Abandoned models.Abandoned
	// ClaimConcurrency is how many claims run at once (cmd/gateway: the
	// handshake pool's size); the others wait for a slot in arrival order.
	ClaimConcurrency int
	// MaxClaimsInflight, if > 0, refuses with 503 + Retry-After, at once, a
	// handshake that would wait behind that many others for a claim slot:
	// the model's capacity.max_queue. 0 is no limit.
	MaxClaimsInflight int
	// DrainGrace bounds how long a drain waits for connections to close
	// before it force-closes them and releases leftover routes.
	DrainGrace time.Duration
	// MaxConns caps the open TCP connections (sessions, requests and idle
	// keep-alives). At the cap an idle keep-alive connection is closed to
	// make room, or else the new connection gets a canned 503 and is
	// closed. 0 is no cap; cmd/gateway derives it from the descriptor limit.
	MaxConns int
	// HTTPIdle closes an HTTP keep-alive connection idle this long
	// (WebSocket sessions have Idle instead); it must be > 0.
	HTTPIdle time.Duration
	// SyncRate and SyncBurst are each connection's token bucket for sync
	// requests, per second and requests: a request beyond it waits for its
	// token, so a flooding client slows itself down.
	SyncRate  float64
	SyncBurst int
	// LogRejections chooses per-refusal lines or per-interval counts.
	LogRejections RejectionLog
}

// DefaultConfig returns the seed's lab settings with unlimited admission.
func DefaultConfig(id string) Config {
	return Config{
		ID:               id,
		Lease:            1500 * time.Millisecond,
		Ping:             500 * time.Millisecond,
		Idle:             3000 * time.Millisecond,
		AdmitBurst:       10,
		SourceBurst:      10,
		RetryAfter:       time.Second,
		Abandoned:        models.AbandonedSkip,
		ClaimConcurrency: 8,
		DrainGrace:       3 * time.Second,
		HTTPIdle:         5 * time.Second,
		SyncRate:         20,
		SyncBurst:        40,
		LogRejections:    RejectionSummary,
	}
}

// ConfigError names the offending setting by its flag name.
type ConfigError struct {
	Flag    string
	Problem string
	Got     any
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("--%s: %s (got %v)", e.Flag, e.Problem, e.Got)
}

// Period is the lease loop period: models.LeasePeriod(Lease, Ping).
func (c Config) Period() time.Duration { return models.LeasePeriod(c.Lease, c.Ping) }

// admission returns the token bucket spec; Kind "unlimited" when AdmitRate is 0.
func (c Config) admission() models.AdmissionSpec {
	if c.AdmitRate == 0 {
		return models.AdmissionSpec{Kind: "unlimited", RetryAfter: c.RetryAfter}
	}
	return models.AdmissionSpec{Kind: "token_bucket", Rate: c.AdmitRate, Burst: c.AdmitBurst, RetryAfter: c.RetryAfter}
}

// retryAfterSeconds is the Retry-After header value: RetryAfter rounded up.
func (c Config) retryAfterSeconds() int {
	return int(math.Ceil(c.RetryAfter.Seconds()))
}

// Validate checks every setting and returns the first problem.
func (c Config) Validate() error {
	switch {
	case c.ID == "" || len(c.ID) > 64 || strings.ContainsAny(c.ID, "| \t\n"):
		return &ConfigError{"id", "must be 1-64 characters without '|' or spaces", fmt.Sprintf("%q", c.ID)}
	case c.Lease <= 0:
		return &ConfigError{"lease", "must be > 0", c.Lease}
	case c.Period() >= c.Lease:
		return &ConfigError{"lease", fmt.Sprintf("must exceed the lease loop period %v", c.Period()), c.Lease}
	case c.Ping < 0:
		return &ConfigError{"ping", "must be >= 0", c.Ping}
	case c.Idle < 0:
		return &ConfigError{"idle", "must be >= 0", c.Idle}
	case c.Idle > 0 && c.Ping > 0 && c.Idle <= c.Ping:
		return &ConfigError{"idle", fmt.Sprintf("must exceed --ping %v, or no pong could ever arrive in time", c.Ping), c.Idle}
	case c.AdmitRate < 0:
		return &ConfigError{"admit-rate", "must be >= 0 (0 = unlimited)", c.AdmitRate}
	case c.SourceRate < 0:
		return &ConfigError{"source-rate", "must be >= 0 (0 = no per-source limit)", c.SourceRate}
	case c.RetryAfter < 0:
		return &ConfigError{"retry-after", "must be >= 0", c.RetryAfter}
	case c.Abandoned != models.AbandonedSkip && c.Abandoned != models.AbandonedServe:
		return &ConfigError{"abandoned", "must be skip or serve", fmt.Sprintf("%q", c.Abandoned)}
	case c.ClaimConcurrency < 1:
		return &ConfigError{"db-conns", "must be >= 1 (claims run on the handshake pool)", c.ClaimConcurrency}
	case c.MaxClaimsInflight < 0:
		return &ConfigError{"max-claims-inflight", "must be >= 0 (0 = no limit)", c.MaxClaimsInflight}
	case c.DrainGrace < 0:
		return &ConfigError{"drain-grace", "must be >= 0", c.DrainGrace}
	case c.MaxConns < 0:
		return &ConfigError{"max-conns", "must be >= 0 (0 = no cap)", c.MaxConns}
	case c.HTTPIdle <= 0:
		return &ConfigError{"http-idle", "must be > 0", c.HTTPIdle}
	case c.LogRejections != RejectionSummary && c.LogRejections != RejectionEach:
		return &ConfigError{"log-rejections", "must be summary or each", fmt.Sprintf("%q", c.LogRejections)}
	}
	if err := c.admission().Validate(); err != nil {
		var pe *param.Error
		if errors.As(err, &pe) {
			return &ConfigError{"admit-" + pe.Key, pe.Problem, pe.Got}
		}
		return err
	}
	for _, b := range []struct {
		flag  string
		rate  float64
		burst int
	}{{"source", c.SourceRate, c.SourceBurst}, {"sync", c.SyncRate, c.SyncBurst}} {
		if b.rate == 0 && b.flag == "source" {
			continue
		}
		spec := models.AdmissionSpec{Kind: "token_bucket", Rate: b.rate, Burst: b.burst}
		if err := spec.Validate(); err != nil {
			var pe *param.Error
			if errors.As(err, &pe) {
				return &ConfigError{b.flag + "-" + pe.Key, pe.Problem, pe.Got}
			}
			return err
		}
	}
	return nil
}
