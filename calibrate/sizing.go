package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"stormsim/calibrate/fit"
	"stormsim/calibrate/lab"
	"stormsim/calibrate/measured"
	"stormsim/calibrate/report"
	"stormsim/config"
	"stormsim/models"
	"stormsim/sim"
)

// Size sizes a storm to the machine before its real runs: a warm-up (the
// storm as written, with no handshake timeout and no bucket, cut at
// warmupHorizon, so that its claims queue and are all useful) measures the
// survivor's claim rate c; then the storm runs with clients
// = ceil(QueueOverTimeout x timeout x c), so the first wave's claims last
// that many timeouts whatever the hour's speed, and a token bucket at
// BucketFraction x c. When the count chosen is more than a tenth from
// the warm-up's, a second warm-up at the chosen count measures c again,
// and the storm is sized on that. Zero fields keep what the config says.
type Size struct {
	QueueOverTimeout float64 // multiple of the policy's handshake timeout; needs one
	BucketFraction   float64 // of the claim rate, in (0, 1]; needs admission token_bucket
}

// warmupTries is how many warm-ups a sizing takes at most while other work
// disturbs them.
const warmupTries = 3

// warmupHorizon cuts a warm-up whose storm has a horizon: a few hundred
// backlogged claims at this machine's rates, short beside the storm. (With
// the storm's own timeout a warm-up of 2,000 clients on a slow hour had no
// useful claim at all to time: every first answer came too late.)
const warmupHorizon = 3 * time.Second

// check refuses a sizing the storm cannot take.
func (z *Size) check(s *sim.Scenario, policyTimeout time.Duration) error {
	switch {
	case z.QueueOverTimeout < 0 || z.QueueOverTimeout > 100:
		return fmt.Errorf("--size-queue must be in (0, 100] timeouts (got %g)", z.QueueOverTimeout)
	case z.BucketFraction < 0 || z.BucketFraction > 1:
		return fmt.Errorf("--size-bucket must be in (0, 1] of the claim rate (got %g)", z.BucketFraction)
	case z.QueueOverTimeout == 0 && z.BucketFraction == 0:
		return errors.New("a sizing needs --size-queue or --size-bucket")
	case z.QueueOverTimeout > 0 && policyTimeout <= 0:
		return errors.New("--size-queue sizes the first wave in handshake timeouts: the policy under test has no timeout")
	case z.BucketFraction > 0 && s.Admission.Kind != models.AdmissionTokenBucket:
		return fmt.Errorf("--size-bucket sets a token bucket's rate: admission is %s", s.Admission.Kind)
	case s.Deploy != nil:
		return errors.New("a rolling deploy is not sized: it has no crash storm to warm up on")
	}
	return nil
}

// warmUp measures the survivor's claim rate on a warm-up storm and chooses
// the storm's size from it.
func (c *calibration) warmUp(ctx context.Context, l lab.Lab) (*report.Sizing, error) {
	tmp, err := os.MkdirTemp("", "stormsim-warmup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	l.Dir, l.Record = tmp, nil // the warm-up's logs are not the storm's
	p := c.plan
	p.Policy.Timeout, p.DrainPolicy.Timeout = 0, 0
	p.Admission = models.AdmissionSpec{Kind: models.AdmissionUnlimited, RetryAfter: p.Admission.RetryAfter}
	p.WithDrain, p.AcceptBound = false, math.Inf(1)
	if p.Horizon > warmupHorizon {
		p.Horizon = warmupHorizon
	}
	z := &report.Sizing{WarmupClients: p.Clients, WrittenClients: c.s.Clients, Clients: c.s.Clients}
	if c.s.Admission.Kind == models.AdmissionTokenBucket {
		z.WrittenBucketPerS, z.BucketPerS = c.s.Admission.Rate, c.s.Admission.Rate
	}
	if err := c.warmUpAt(ctx, l, p, z); err != nil {
		return nil, err
	}
	c.opt.Size.choose(z, c.policy.Timeout)
	if first := z.WarmupClients; farFrom(z.Clients, first) && z.Clients <= c.opt.MaxClients {
		// The survivor's claim rate depends on how many clients it holds
		// (on a slow hour the seed lab's claimed 530, 430 and 383/s at
		// 1,000, 2,000 and 4,000 clients), so the size the written count
		// chose is warmed up again and sized on that.
		z.FirstWarmupClients, z.FirstWarmupClaimsPerS = first, z.WarmupClaimsPerS
		c.logf("sized: claims %.0f/s measured at %d clients; %d chosen, warmed up again", z.WarmupClaimsPerS, first, z.Clients)
		p.Clients, z.WarmupClients = z.Clients, z.Clients
		if err := c.warmUpAt(ctx, l, p, z); err != nil {
			return nil, err
		}
		c.opt.Size.choose(z, c.policy.Timeout)
	}
	if z.Clients > c.opt.MaxClients {
		return nil, &UsageError{fmt.Errorf("sized to %d clients (%g timeouts of %v at %.0f claims/s), over --max-clients %d: lower --size-queue or raise --max-clients",
			z.Clients, z.QueueOverTimeout, c.policy.Timeout, z.WarmupClaimsPerS, c.opt.MaxClients)}
	}
	c.logf("sized: claims %.0f/s measured; %d clients, %s", z.WarmupClaimsPerS, z.Clients, bucketWords(z))
	return z, nil
}

// farFrom reports whether a chosen count is more than a tenth away from
// the count it was measured at: then it is warmed up again.
func farFrom(chosen, measured int) bool {
	return 10*abs(chosen-measured) > measured
}

func abs(x int) int { return max(x, -x) }

// warmUpAt runs the warm-up plan p (up to warmupTries times while other
// work disturbs it) and puts its claim and decision rates into z.
func (c *calibration) warmUpAt(ctx context.Context, l lab.Lab, p lab.Plan, z *report.Sizing) error {
	var claims fit.Claims
	var r *measured.Run
	for try := 1; try <= warmupTries; try++ {
		c.logf("warm-up %d: %d clients, no timeout, no bucket: the survivor's claim rate on this machine", try, p.Clients)
		var err error
		if r, err = l.Run(ctx, p, try, c.s.Seed); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if claims, err = fit.ClaimsOf([]*measured.Run{r}); err != nil {
			return &UsageError{fmt.Errorf("warm-up: the survivor's claims could not be timed: %w", err)}
		}
		z.WarmupDisturbed = r.Load.Disturbed
		if !r.Load.Disturbed {
			break
		}
		c.logf("warm-up %d: disturbed by other work (%.2f cores during)", try, r.Load.OtherDuringCores)
	}
	z.WarmupClaimsPerS, z.WarmupGaps, z.WarmupContention = claims.AdmitPerS, claims.Gaps, claims.Contention
	z.WarmupDecidePerS, z.WarmupDecisions = 0, fit.DecisionsOf([]*measured.Run{r})
	if w, err := fit.FirstWaveOf([]*measured.Run{r}); err == nil {
		z.WarmupDecidePerS = w.DecidePerS
	}
	return nil
}

// choose sets z's clients and bucket rate from its measured claim rate
// and the policy's handshake timeout, by z's rules; a rule that is 0
// keeps what the config wrote.
func (z *Size) choose(out *report.Sizing, timeout time.Duration) {
	rate := out.WarmupClaimsPerS
	out.QueueOverTimeout, out.BucketFraction = z.QueueOverTimeout, z.BucketFraction
	if z.QueueOverTimeout > 0 {
		out.TimeoutMs = float64(timeout) / float64(time.Millisecond)
		out.Clients = max(1, int(math.Ceil(z.QueueOverTimeout*timeout.Seconds()*rate)))
	}
	if z.BucketFraction > 0 {
		out.BucketPerS = math.Round(z.BucketFraction*rate*1000) / 1000
	}
}

func bucketWords(z *report.Sizing) string {
	if z.BucketPerS == 0 {
		return "no bucket"
	}
	return fmt.Sprintf("bucket %.1f/s", z.BucketPerS)
}

// applySizing makes the calibration's storm the one z chose: its clients
// and bucket rate, resolved and checked again as a config is.
func (c *calibration) applySizing(z *report.Sizing) error {
	s := *c.s
	s.Clients = z.Clients
	if z.BucketPerS > 0 {
		s.Admission.Rate = z.BucketPerS
	}
	if err := s.Resolve(); err != nil {
		return fmt.Errorf("the sized storm: %w", err)
	}
	sized := &s
	plan, err := lab.NewPlan(sized, c.policy)
	if err != nil {
		return fmt.Errorf("the sized storm: %w", err)
	}
	c.s, c.plan = sized, plan
	c.rep.Sized, c.rep.Clients, c.rep.Config, c.rep.Frame = z, sized.Clients, config.Echo(sized), frameOf(plan)
	return nil
}
