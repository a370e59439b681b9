//go:build !unix

package main

// defaultMaxConns has no descriptor limit to derive from off Unix.
func defaultMaxConns(int) (int, error) { return 10_000, nil }
