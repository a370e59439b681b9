package sim

// Result is what one storm did under one policy. Times are in milliseconds
// since t = 0 (the failure), as float64 with nanosecond precision.
type Result struct {
	Policy                string    `json:"policy"`
	Clients               int       `json:"clients"`
	Attempts              int64     `json:"attempts"`                 // handshakes that reached admission
	Accepted              int64     `json:"accepted"`                 // handshakes admitted (clients connected)
	Rejected              int64     `json:"rejected"`                 // handshakes refused
	Abandoned             int64     `json:"abandoned"`                // clients that gave up (max_attempts)
	PeakAttemptsPerWindow int64     `json:"peak_attempts_per_window"` // most attempts in one metrics window
	PeakAcceptsPerWindow  int64     `json:"peak_accepts_per_window"`  // most admissions in one metrics window
	FirstWindowAttempts   int64     `json:"first_window_attempts"`    // attempts in the window of the first attempt
	ConvergenceMs         float64   `json:"convergence_ms"`           // time of the last successful connect
	ConnectMs             Quantiles `json:"connect_ms"`               // connect-time distribution over connected clients
	WindowMs              float64   `json:"window_ms"`                // series bucket length
	Series                Series    `json:"series"`
}

// Quantiles are nearest-rank quantiles (the ceil(q*n)-th smallest value) of
// connect times in milliseconds; all zero when nobody connected.
type Quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Series holds per-window counts; entry i covers [i*window, (i+1)*window).
// Trailing empty windows are trimmed (all three arrays share one length).
type Series struct {
	Attempts []int64 `json:"attempts"`
	Accepts  []int64 `json:"accepts"`
	Rejects  []int64 `json:"rejects"`
}
