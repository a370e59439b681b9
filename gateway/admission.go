package gateway

import (
	"sync"
	"time"

	"stormsim/models"
)

// admitter is the handshake admission gate: the simulator's models.Admission
// (token bucket or unlimited), serialised by a mutex and fed the time since
// start on the monotonic clock, read under the lock so calls see
// non-decreasing times.
type admitter struct {
	mu    sync.Mutex
	rule  models.Admission
	start time.Time
}

func newAdmitter(spec models.AdmissionSpec, start time.Time) *admitter {
	var rule models.Admission = models.Unlimited{}
	if spec.Kind == "token_bucket" {
		rule = models.NewTokenBucket(spec.Rate, spec.Burst)
	}
	return &admitter{rule: rule, start: start}
}

// admit takes a token if one is available; at is the decision time since
// start, logged so a harness can check the admission bound exactly.
func (a *admitter) admit() (ok bool, at time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	at = time.Since(a.start)
	return a.rule.Admit(at), at
}
