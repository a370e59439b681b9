package results

import (
	"strings"
	"testing"

	"stormsim/models"
	"stormsim/sim"
)

func TestParseMetricRef(t *testing.T) {
	tests := []struct {
		in      string
		want    MetricRef
		wantErr string
	}{
		{"results[full].convergence_ms", MetricRef{Policy: "full", Field: "convergence_ms"}, ""},
		{" p95( results[a b].connect_ms.p99 ) ", MetricRef{Stat: "p95", Policy: "a b", Field: "connect_ms.p99"}, ""},
		{"gateways[1].accepted", MetricRef{Field: "gateways[1].accepted"}, ""},
		{"max(reclaim.reclaim_ms)", MetricRef{Stat: "max", Field: "reclaim.reclaim_ms"}, ""},
		{"median(attempts)", MetricRef{}, `unknown statistic "median"`},
		{"mean(attempts", MetricRef{}, "missing )"},
		{"results[full]", MetricRef{}, "want results[LABEL].FIELD"},
		{"results[].attempts", MetricRef{}, "want results[LABEL].FIELD"},
		{"", MetricRef{}, "want a field path"},
		{"attempts < 3", MetricRef{}, "want a field path"},
	}
	for _, tt := range tests {
		got, err := ParseMetricRef(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMetricRef(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMetricRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if again, _ := ParseMetricRef(got.String()); again != got {
			t.Errorf("String() %q does not parse back", got)
		}
	}
}

func TestCatalogCheck(t *testing.T) {
	one := Catalog{Labels: []string{"exponential", "full"}, Replications: 1}
	many := Catalog{Labels: []string{"exponential", "full"}, Replications: 5}
	tests := []struct {
		name    string
		c       Catalog
		ref     string
		wantErr string // "" for valid
	}{
		{"plain field", one, "results[full].convergence_ms", ""},
		{"nested field", one, "results[exponential].connect_ms.p99", ""},
		{"every policy (sweeps)", one, "attempts", ""},
		{"misspelt field", one, "results[full].convergance_ms",
			"results[full].convergance_ms: unknown metric; did you mean results[full].convergence_ms?"},
		{"misspelt label", one, "results[ful].attempts",
			"results[ful].attempts: no policy labelled ful (the config has exponential, full); did you mean results[full].attempts?"},
		{"misspelt without policy", one, "atempts", "atempts: unknown metric; did you mean attempts?"},
		{"nothing close", one, "results[full].zzzzzzzzzzzzzzzzzzzzzzzzzz", "results[full].zzzzzzzzzzzzzzzzzzzzzzzzzz: unknown metric"},
		{"statistic without replications", one, "p95(results[full].attempts)",
			"p95(results[full].attempts): statistics over replications need replications >= 2 (got 1); use results[full].attempts"},
		{"statistic with replications", many, "p95(results[full].attempts)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := ParseMetricRef(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.c.Check(ref)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("error %v\nwant %s", err, tt.wantErr)
			}
		})
	}
}

func TestTimeUnit(t *testing.T) {
	tests := []struct{ field, want string }{
		{"convergence_ms", "ms"}, {"connect_ms.p99", "ms"}, {"reclaim.stale_route_seconds", "s"},
		{"database.peak_rows_per_s", ""}, {"attempts", ""}, {"gateways[1].accepted", ""},
		{"database.time_above_budget_ms", "ms"}, {"detection_ms[0].x", "ms"},
	}
	for _, tt := range tests {
		if got := TimeUnit(tt.field); got != tt.want {
			t.Errorf("TimeUnit(%q) = %q, want %q", tt.field, got, tt.want)
		}
	}
}

func TestModelKeysAndModelsOn(t *testing.T) {
	for field, want := range map[string]string{
		"reclaim.reclaim_ms": "lease", "gateways[2].accepted": "gateways", "database.peak_rows_per_s": "database",
		"drain.drain_ms": "then_drain failure", "detection.last_notice_ms": "detection",
		"convergence_ms": "", "connect_ms.p99": "", "attempts": "",
	} {
		if got := strings.Join(ModelKeys(field), " "); got != want {
			t.Errorf("ModelKeys(%s) = %q, want %q", field, got, want)
		}
	}
	s := &sim.Scenario{Lease: &models.LeaseSpec{}, Database: &models.DatabaseSpec{}}
	if got := strings.Join(ModelsOn(s), " "); got != "lease database" {
		t.Errorf("ModelsOn = %q", got)
	}
}
