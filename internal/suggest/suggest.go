// Package suggest finds the known name closest to a misspelt one, for
// "did you mean" messages about config keys and metric names.
package suggest

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the name among known nearest to name, if it is close enough
// to be a plausible typo: within max(2, len(name)/3) edits.
func Closest(name string, known []string) (string, bool) {
	best, bestDist := "", -1
	for _, k := range known {
		if d := Distance(name, k); bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, bestDist >= 0 && bestDist <= max(2, len(name)/3)
}
