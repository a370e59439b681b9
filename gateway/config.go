// Package gateway is the real gateway of the seed document: it admits
// WebSocket handshakes through the simulator's token bucket, claims device
// routes in PostgreSQL, keeps a database lease and sweeps dead gateways'
// routes, closes replaced connections on im_kick, serves sync, and drains on
// shutdown. The HTTP/WebSocket plumbing (server.go, session.go) is kept apart
// from the rules (handshake.go, lease.go, kicks.go, drain.go).
package gateway

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"stormsim/models"
	"stormsim/policies"
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
	// pong from the client (seed: 3000ms); 0 disables.
	Idle time.Duration
	// AdmitRate is the token bucket refill in handshakes per second; 0 means
	// unlimited admission.
	AdmitRate float64
	// AdmitBurst is the token bucket capacity in handshakes.
	AdmitBurst int
	// RetryAfter is carried by 429 and 503 answers, rounded up to whole
	// seconds on the wire (the header has no finer unit).
	RetryAfter time.Duration
	// DrainGrace bounds how long a drain waits for connections to close
	// before it force-closes them and releases leftover routes.
	DrainGrace time.Duration
}

// DefaultConfig returns the seed's lab settings with unlimited admission.
func DefaultConfig(id string) Config {
	return Config{
		ID:         id,
		Lease:      1500 * time.Millisecond,
		Ping:       500 * time.Millisecond,
		Idle:       3000 * time.Millisecond,
		AdmitBurst: 10,
		RetryAfter: time.Second,
		DrainGrace: 3 * time.Second,
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
	case c.RetryAfter < 0:
		return &ConfigError{"retry-after", "must be >= 0", c.RetryAfter}
	case c.DrainGrace < 0:
		return &ConfigError{"drain-grace", "must be >= 0", c.DrainGrace}
	}
	if err := c.admission().Validate(); err != nil {
		var pe *policies.ParamError
		if errors.As(err, &pe) {
			return &ConfigError{"admit-" + pe.Key, pe.Problem, pe.Got}
		}
		return err
	}
	return nil
}
