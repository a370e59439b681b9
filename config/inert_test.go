package config

import (
	"slices"
	"strings"
	"testing"
)

// TestInertKeysWarn goes through the config reference for keys that can
// have no effect given the others, and pins the warning each gets, at
// its line; and, beside each, the same key where it does act, which gets
// none. The pairs:
//
//   - a policy's timeout without a capacity model, when the network (if
//     any) answers every handshake within it;
//   - capacity.abandoned and capacity.wasted_per_s without a timeout (no
//     client ever leaves), and wasted_per_s with abandoned: skip (no claim
//     for a departed client) unless network.gone gives it claims begun
//     before the gateway knew; network.gone without skip or a timeout;
//   - capacity.max_queue of at least the clients without a timeout (each
//     client has at most one handshake waiting); max_queue itself lives in
//     the capacity section, so it never stands without a capacity model;
//   - capacity.reject_per_s when nothing can be rejected: unlimited
//     admission, without abandoned: skip;
//   - admission.retry_after (and gateways.admission's) that no policy
//     honours, and honor_retry_after with no Retry-After sent;
//   - failure.grace and failure.spread of a failure that is not a drain,
//     drain_policy without a drain (failure, then_drain or a deploy);
//   - detection and lease of a drain (goaways, routes released);
//   - gateways.connections with a balancer that does not count them.
func TestInertKeysWarn(t *testing.T) {
	const base = "clients: 10\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 100ms}]\n"
	const timeout = "clients: 10\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 100ms, timeout: 1s}]\n"
	for _, c := range []struct {
		name, yaml string
		want       []string // "LINE: PATH"
	}{
		{"timeout without a capacity", timeout, []string{"3: policies[0].timeout"}},
		{"timeout with a capacity", timeout + "capacity: {admit_per_s: 100}\n", nil},
		{"timeout beyond every round trip", timeout + "network: {rtt: {dist: uniform, min: 10ms, max: 300ms}}\n", []string{"3: policies[0].timeout"}},
		{"timeout a round trip can pass", timeout + "network: {rtt: {dist: uniform, min: 10ms, max: 2s}}\n", nil},
		{"abandoned without a timeout", base + "capacity:\n  admit_per_s: 100\n  abandoned: skip\n", []string{"6: capacity.abandoned"}},
		{"abandoned with a timeout", timeout + "capacity: {admit_per_s: 100, abandoned: skip}\n", nil},
		{"wasted_per_s without a timeout", base + "capacity:\n  admit_per_s: 100\n  wasted_per_s: 200\n", []string{"6: capacity.wasted_per_s"}},
		{"wasted_per_s with skip", timeout + "capacity:\n  admit_per_s: 100\n  abandoned: skip\n  wasted_per_s: 200\n", []string{"7: capacity.wasted_per_s"}},
		{"wasted_per_s with serve and a timeout", timeout + "capacity: {admit_per_s: 100, wasted_per_s: 200}\n", nil},
		{"wasted_per_s with skip and network.gone", timeout + "network: {gone: {value: 5ms}}\ncapacity: {admit_per_s: 100, abandoned: skip, wasted_per_s: 200}\n", nil},
		{"gone with serve", timeout + "network:\n  gone: {value: 5ms}\ncapacity: {admit_per_s: 100}\n", []string{"5: network.gone"}},
		{"gone without a timeout", base + "network:\n  gone: {value: 5ms}\ncapacity: {admit_per_s: 100, abandoned: skip}\n", []string{"6: capacity.abandoned", "5: network.gone"}},
		{"gone with skip and a timeout", timeout + "network: {gone: {value: 5ms}}\ncapacity: {admit_per_s: 100, abandoned: skip}\n", nil},
		{"max_queue of the clients, no timeout", base + "capacity:\n  admit_per_s: 100\n  max_queue: 10\n", []string{"6: capacity.max_queue"}},
		{"max_queue below the clients", base + "capacity: {admit_per_s: 100, max_queue: 9}\n", nil},
		{"max_queue of the clients with a timeout", timeout + "capacity: {admit_per_s: 100, max_queue: 10}\n", nil},
		{"reject_per_s with unlimited admission", base + "capacity:\n  admit_per_s: 100\n  reject_per_s: 1000\n", []string{"6: capacity.reject_per_s"}},
		{"reject_per_s with a bucket", strings.Replace(base, "{kind: unlimited}", "{kind: token_bucket, rate: 10, burst: 1}", 1) +
			"capacity: {admit_per_s: 100, reject_per_s: 1000}\n", nil},
		{"reject_per_s paying for skips", timeout + "capacity: {admit_per_s: 100, reject_per_s: 1000, abandoned: skip}\n", nil},
		{"retry_after nobody honours", "clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 1, retry_after: 1s}\npolicies: [{name: fixed, base: 100ms}]\n",
			[]string{"2: admission.retry_after"}},
		{"retry_after honoured", "clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 1, retry_after: 1s}\npolicies: [{name: fixed, base: 100ms, honor_retry_after: true}]\n", nil},
		{"honour without a Retry-After", "clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies:\n  - {name: fixed, base: 100ms, honor_retry_after: true}\n",
			[]string{"4: policies[0].honor_retry_after"}},
		{"the survivors' retry_after nobody honours", base + "gateways:\n  count: 2\n  admission: {kind: slots, slot: 10ms, per_slot: 1, retry_after: 1s}\n",
			[]string{"6: gateways.admission.retry_after"}},
		{"grace of a crash", base + "failure:\n  kind: crash\n  grace: 1s\n", []string{"6: failure.grace"}},
		{"spread of a hang", base + "failure: {kind: hang, spread: true}\ndetection: {kind: heartbeat, ping: 1s, idle: 3s}\n", []string{"4: failure.spread"}},
		{"grace of a drain", base + "failure: {kind: drain, grace: 1s, spread: true}\n", nil},
		{"drain_policy without a drain", base + "drain_policy: {name: full, base: 10ms, cap: 1s}\n", []string{"4: drain_policy"}},
		{"drain_policy of then_drain", base + "drain_policy: {name: full, base: 10ms, cap: 1s}\nthen_drain: {grace: 1s}\n", nil},
		{"drain_policy of a deploy", base + "drain_policy: {name: full, base: 10ms, cap: 1s}\ngateways: {count: 2}\ndeploy: {}\n", nil},
		{"detection of a drain", base + "failure: {kind: drain}\ndetection: {kind: reset}\n", []string{"5: detection"}},
		{"lease of a drain", base + "failure: {kind: drain}\nlease: {duration: 1s}\n", []string{"5: lease"}},
		{"lease of a crash", base + "lease: {duration: 1s}\n", nil},
		{"connections without least_connections", base + "gateways:\n  count: 3\n  balancer: round_robin\n  connections: 5\n", []string{"7: gateways.connections"}},
		{"connections with least_connections", base + "gateways: {count: 3, balancer: least_connections, connections: 5}\n", nil},
		{"a default that cannot act is not the user's", base + "gateways: {count: 3, balancer: random}\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := ParseDocument("x.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			f, err := doc.ScenarioFile()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range f.Warnings {
				line, _ := strings.CutPrefix(w.Where, "x.yaml:")
				got = append(got, line+": "+w.Path)
				if s := w.String(); !strings.HasPrefix(s, w.Where+": warning: "+w.Path+": ") || strings.Contains(s, "\n") {
					t.Errorf("warning %q is not one line FILE:LINE: warning: PATH: PROBLEM", s)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("warnings %v, want %v (%v)", got, c.want, f.Warnings)
			}
		})
	}
}

// TestInertKeySetByOverride: a key set by --set is located at the
// override that set it.
func TestInertKeySetByOverride(t *testing.T) {
	doc, err := ParseDocument("x.yaml", []byte("clients: 10\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 100ms}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.SetArg("policies[0].timeout=2s"); err != nil {
		t.Fatal(err)
	}
	f, err := doc.ScenarioFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 1 || !strings.HasPrefix(f.Warnings[0].String(), "--set policies[0].timeout=2s: warning: policies[0].timeout: cannot fire") {
		t.Errorf("warnings %v, want one at the override", f.Warnings)
	}
}
