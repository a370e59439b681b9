package quantile

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestNearestRankByHand(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name   string
		sorted []float64
		q      float64
		want   float64
	}{
		{"no values", nil, 0.5, 0},
		{"one value is every quantile", []float64{7}, 0.99, 7},
		{"median of ten is the 5th", ten, 0.5, 5},
		{"p90 of ten is the 9th", ten, 0.9, 9},
		{"p95 of ten rounds up to the 10th", ten, 0.95, 10},
		{"p99 of ten is the largest", ten, 0.99, 10},
		{"q 0 is the smallest", ten, 0, 1},
		{"median of four is the 2nd, not between", []float64{10, 20, 30, 40}, 0.5, 20},
		{"p50 of three is the 2nd", []float64{1, 100, 1000}, 0.5, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearestRank(tt.sorted, tt.q); got != tt.want {
				t.Errorf("NearestRank(%v, %v) = %v, want %v", tt.sorted, tt.q, got, tt.want)
			}
		})
	}
}

// TestRankEqualsTheIntegerFormula compares Rank with the integer
// arithmetic the engine uses for whole percentages, (n*p + 99) / 100.
func TestRankEqualsTheIntegerFormula(t *testing.T) {
	ns := []int{1, 2, 3, 7, 10, 99, 100, 101, 333, 1000, 12345, 1 << 20, 1e9 + 7, 1 << 40}
	for n := 1; n <= 5000; n++ {
		ns = append(ns, n)
	}
	for _, n := range ns {
		for p := 1; p <= 100; p++ {
			want := (n*p + 99) / 100
			if got := Rank(n, float64(p)/100); got != want {
				t.Fatalf("Rank(%d, %d%%) = %d, want %d", n, p, got, want)
			}
		}
	}
}

// TestNearestRankAgreesWithGonumEmpirical checks NearestRank against an
// independent implementation: gonum's empirical quantile, "the lowest
// value q for which q is greater than or equal to the fraction p of
// samples".
func TestNearestRankAgreesWithGonumEmpirical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		v := make([]float64, 1+rng.IntN(300))
		for i := range v {
			v[i] = float64(rng.IntN(50)) // ties too
		}
		slices.Sort(v)
		for _, q := range []float64{0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1} {
			if got, want := NearestRank(v, q), stat.Quantile(q, stat.Empirical, v, nil); got != want {
				t.Fatalf("n=%d q=%v: %v, gonum %v", len(v), q, got, want)
			}
		}
	}
}

// TestRankPercentIsRank: the integer form agrees with Rank for every whole
// percentage of up to a thousand values.
func TestRankPercentIsRank(t *testing.T) {
	for n := 0; n <= 1000; n++ {
		for pct := 0; pct <= 100; pct++ {
			if got, want := RankPercent(int64(n), int64(pct)), Rank(n, float64(pct)/100); got != int64(want) {
				t.Fatalf("RankPercent(%d, %d) = %d, Rank = %d", n, pct, got, want)
			}
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		values []float64
		want   float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{9, 1, 5}, 5}, {[]float64{40, 10, 30, 20}, 20}} {
		if got := Median(c.values); got != c.want {
			t.Errorf("Median(%v) = %v, want %v (the lower middle of an even count)", c.values, got, c.want)
		}
	}
}
