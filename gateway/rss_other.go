//go:build !linux

package gateway

// residentBytes is unknown off Linux.
func residentBytes() (int64, bool) { return 0, false }
