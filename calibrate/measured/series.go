package measured

// Series is a storm's handshakes per window at the gateway; window i covers
// [i*window, (i+1)*window) from the phase's origin.
type Series struct {
	Attempts              []int64 `json:"attempts"`
	Accepts               []int64 `json:"accepts"`
	Rejects               []int64 `json:"rejects"`
	PeakAttemptsPerWindow int64   `json:"peak_attempts_per_window"`
	PeakAcceptsPerWindow  int64   `json:"peak_accepts_per_window"`
	FirstWindowAttempts   int64   `json:"first_window_attempts"` // attempts in the window of the first attempt
	// ClockSkewMs says how well the admitted decisions are placed: how much
	// later than the fastest admission's the fifth fastest one's (log time
	// - decision on the gateway's clock) lies.
	ClockSkewMs float64 `json:"clock_skew_ms,omitempty"`
	// ClockSlackMs is how much later the admitted decisions would lie were
	// they placed by their log lines' times alone, not by the clients'
	// sends.
	ClockSlackMs float64 `json:"clock_slack_ms,omitempty"`
}

// Add counts one decision in window i (i >= 0).
func (s *Series) Add(i int, admitted bool) {
	grow(&s.Attempts, i)
	s.Attempts[i]++
	if admitted {
		grow(&s.Accepts, i)
		s.Accepts[i]++
	} else {
		grow(&s.Rejects, i)
		s.Rejects[i]++
	}
}

// Finish pads accepts and rejects to the attempts' length and sets the
// peaks.
func (s *Series) Finish() {
	n := len(s.Attempts)
	s.Accepts, s.Rejects = pad(s.Accepts, n), pad(s.Rejects, n)
	s.PeakAttemptsPerWindow, s.PeakAcceptsPerWindow, s.FirstWindowAttempts = 0, 0, 0
	for i, v := range s.Attempts {
		s.PeakAttemptsPerWindow = max(s.PeakAttemptsPerWindow, v)
		s.PeakAcceptsPerWindow = max(s.PeakAcceptsPerWindow, s.Accepts[i])
		if s.FirstWindowAttempts == 0 {
			s.FirstWindowAttempts = v
		}
	}
}

func grow(series *[]int64, i int) {
	for len(*series) <= i {
		*series = append(*series, 0)
	}
}

func pad(s []int64, n int) []int64 {
	out := make([]int64, n)
	copy(out, s)
	return out
}
