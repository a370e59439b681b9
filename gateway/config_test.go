package gateway_test

import (
	"strings"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/models"
)

func TestConfigValidate(t *testing.T) {
	ok := gateway.DefaultConfig("gw-a")
	cases := []struct {
		name string
		edit func(*gateway.Config)
		flag string // "" = valid
	}{
		{"seed defaults", func(*gateway.Config) {}, ""},
		{"seed lab bucket", func(c *gateway.Config) { c.AdmitRate, c.AdmitBurst = 40, 10 }, ""},
		{"unlimited ignores burst", func(c *gateway.Config) { c.AdmitBurst = 0 }, ""},
		{"empty id", func(c *gateway.Config) { c.ID = "" }, "--id"},
		{"id with pipe", func(c *gateway.Config) { c.ID = "a|b" }, "--id"},
		{"300ms lease without ping", func(c *gateway.Config) { c.Lease, c.Ping = 300*time.Millisecond, 0 }, ""},
		{"lease at the 100ms floor", func(c *gateway.Config) { c.Lease = 100 * time.Millisecond }, "--lease"},
		{"idle not above ping", func(c *gateway.Config) { c.Idle = c.Ping }, "--idle"},
		{"negative rate", func(c *gateway.Config) { c.AdmitRate = -1 }, "--admit-rate"},
		{"rate with zero burst", func(c *gateway.Config) { c.AdmitRate, c.AdmitBurst = 40, 0 }, "--admit-burst"},
		{"rate below 0.001", func(c *gateway.Config) { c.AdmitRate = 0.0001 }, "--admit-rate"},
		{"negative retry-after", func(c *gateway.Config) { c.RetryAfter = -time.Second }, "--retry-after"},
		{"negative drain grace", func(c *gateway.Config) { c.DrainGrace = -1 }, "--drain-grace"},
		{"a paced drain", func(c *gateway.Config) {
			c.DrainPace = models.DrainPaceSpec{Kind: models.PaceBatches, Size: 100, Interval: time.Second}
		}, ""},
		{"batches without an interval", func(c *gateway.Config) {
			c.DrainPace = models.DrainPaceSpec{Kind: models.PaceBatches, Size: 100}
		}, "--drain-pace"},
		{"a reserved hint by its own bucket", func(c *gateway.Config) {
			c.AdmitRate, c.ReconnectHint = 40, models.ReconnectHintSpec{Kind: models.HintReserved}
		}, ""},
		{"a reserved hint with nothing to reserve", func(c *gateway.Config) {
			c.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintReserved}
		}, "--reconnect-hint"},
		{"a fixed hint without a delay", func(c *gateway.Config) {
			c.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintFixed}
		}, "--reconnect-hint"},
	}
	for _, c := range cases {
		cfg := ok
		c.edit(&cfg)
		err := cfg.Validate()
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.flag != "" && (err == nil || !strings.HasPrefix(err.Error(), c.flag+":")):
			t.Errorf("%s: error %v, want one about %s", c.name, err, c.flag)
		}
	}
	// The period is the seed's max(100ms, min(ping, lease/3)).
	if p := ok.Period(); p != 500*time.Millisecond {
		t.Errorf("seed period %v, want 500ms", p)
	}
}

func TestMetricsText(t *testing.T) {
	var m gateway.Metrics
	m.Admitted.Add(3)
	for _, d := range []time.Duration{500 * time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, 5 * time.Second} {
		m.LeaseRenew.Observe(d)
	}
	var b strings.Builder
	m.WriteText(&b)
	out := b.String()
	// Cumulative buckets: 1 at <=1ms, 3 at <=5ms (0.0025 holds only the first), 3 up to 2.5s, 4 at +Inf.
	for _, want := range []string{
		"gateway_handshakes_admitted_total 3\n",
		`gateway_handshakes_rejected_total{reason="429"} 0` + "\n",
		`gateway_lease_renew_seconds_bucket{le="0.001"} 1` + "\n",
		`gateway_lease_renew_seconds_bucket{le="0.0025"} 1` + "\n",
		`gateway_lease_renew_seconds_bucket{le="0.005"} 3` + "\n",
		`gateway_lease_renew_seconds_bucket{le="2.5"} 3` + "\n",
		`gateway_lease_renew_seconds_bucket{le="+Inf"} 4` + "\n",
		"gateway_lease_renew_seconds_count 4\n",
		"# TYPE gateway_connections gauge\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics text lacks %q", want)
		}
	}
}
