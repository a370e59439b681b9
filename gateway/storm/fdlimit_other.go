//go:build !unix

package storm

func checkFDs(int, bool) error { return nil }
