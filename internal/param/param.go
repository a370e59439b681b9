// Package param is the error every model's and policy's validation
// returns: the key that is wrong, why, and the value it had. The config
// package adds the file and line.
package param

import "fmt"

// Error says which key of a spec is wrong and why.
type Error struct {
	Key     string // e.g. "cap"
	Problem string // e.g. "must be >= base"
	Got     any
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (got %v)", e.Key, e.Problem, e.Got)
}
