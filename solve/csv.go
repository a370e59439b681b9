package solve

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
)

// CSV is solve.csv: one row per probe, in probe order, with its
// settings, its verdict and each requirement's observed value, margin
// (both in the requirement's unit) and verdict. A value without data is
// an empty cell.
func (d *Document) CSV() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var keys []string
	if d.Across != nil {
		keys = append(keys, d.Across.Key)
	}
	for _, g := range d.Given {
		keys = append(keys, g.Key)
	}
	keys = append(keys, d.Vary.Key)
	header := append([]string{"probe"}, keys...)
	header = append(header, "seed", "replications", "pass")
	for _, r := range d.Requirements {
		header = append(header, r.Metric, "margin("+r.Metric+")", "pass("+r.Metric+")")
	}
	w.Write(header)
	for _, pd := range d.Probes {
		row := []string{strconv.Itoa(pd.ID)}
		for _, k := range keys {
			cell := ""
			for _, v := range pd.Settings {
				if v.Path == k {
					cell = v.Label
				}
			}
			row = append(row, cell)
		}
		row = append(row, strconv.FormatUint(pd.Seed, 10), strconv.Itoa(pd.Replications), strconv.FormatBool(pd.Pass))
		for _, o := range pd.Observations {
			row = append(row, cell(o.Observed), cell(o.Margin), strconv.FormatBool(o.Pass))
		}
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes()
}

func cell(n Number) string {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
