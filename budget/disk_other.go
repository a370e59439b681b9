//go:build !unix

package budget

// FreeDisk is the space free at path; -1: it cannot be told here.
func FreeDisk(path string) int64 { return -1 }
