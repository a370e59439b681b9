package models

import (
	"strconv"
	"strings"
	"time"

	"stormsim/internal/param"
)

// The one-line form of a spec, as a command-line flag takes it:
// KIND or KIND:KEY=VALUE,KEY=VALUE (cmd/gateway's --drain-pace and
// --reconnect-hint, and what calibration passes to it).

type specField struct{ key, value string }

func intValue(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func durationValue(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func floatValue(f float64) string {
	if f == 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// specString writes kind and the fields with a value.
func specString(kind string, fields []specField) string {
	var b strings.Builder
	b.WriteString(kind)
	sep := ":"
	for _, f := range fields {
		if f.value == "" {
			continue
		}
		b.WriteString(sep + f.key + "=" + f.value)
		sep = ","
	}
	return b.String()
}

// parseSpec splits KIND:KEY=VALUE,... into the kind and its fields.
func parseSpec(s string) (string, []specField, error) {
	kind, rest, hasFields := strings.Cut(strings.TrimSpace(s), ":")
	if kind == "" {
		return "", nil, &param.Error{Key: "kind", Problem: "is required: KIND or KIND:KEY=VALUE,...", Got: strconvQuote(s)}
	}
	if !hasFields {
		return kind, nil, nil
	}
	var fields []specField
	for _, kv := range strings.Split(rest, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || key == "" || value == "" {
			return "", nil, &param.Error{Key: strings.TrimSpace(kv), Problem: "want KEY=VALUE", Got: strconvQuote(kv)}
		}
		for _, f := range fields {
			if f.key == key {
				return "", nil, &param.Error{Key: key, Problem: "given twice", Got: value}
			}
		}
		fields = append(fields, specField{key, value})
	}
	return kind, fields, nil
}

func strconvQuote(s string) string { return strconv.Quote(s) }

func (f specField) int(dst *int) error {
	n, err := strconv.Atoi(f.value)
	if err != nil {
		return &param.Error{Key: f.key, Problem: "must be an integer", Got: f.value}
	}
	*dst = n
	return nil
}

func (f specField) duration(dst *time.Duration) error {
	d, err := time.ParseDuration(f.value)
	if err != nil {
		return &param.Error{Key: f.key, Problem: "must be a duration such as 500ms or 2s", Got: f.value}
	}
	*dst = d
	return nil
}

func (f specField) float(dst *float64) error {
	x, err := strconv.ParseFloat(f.value, 64)
	if err != nil {
		return &param.Error{Key: f.key, Problem: "must be a number", Got: f.value}
	}
	*dst = x
	return nil
}
