// Package human formats numbers, times and sizes for people reading a
// terminal: thousands separators, a unit that fits the magnitude.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Count formats n with comma separators, as the seed's tables do.
func Count(n int64) string {
	return groupDigits(strconv.FormatInt(n, 10))
}

// Fixed formats x with the given decimals and comma separators in
// its integer part: 766711.46 is "766,711.5" with one decimal.
func Fixed(x float64, decimals int) string {
	return groupDigits(strconv.FormatFloat(x, 'f', decimals, 64))
}

// groupDigits puts a comma between each group of three digits of the
// integer part of a formatted number.
func groupDigits(s string) string {
	end := strings.IndexByte(s, '.')
	if end < 0 {
		end = len(s)
	}
	digitsFrom := 0
	if strings.HasPrefix(s, "-") {
		digitsFrom = 1
	}
	if strings.ContainsAny(s, "eEIN") { // 1e+300, Inf, NaN: leave as they are
		return s
	}
	for i := end - 3; i > digitsFrom; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Millis formats a time in milliseconds for reading: milliseconds to the
// microsecond below 1 s ("12.5ms"), seconds to the millisecond below
// 10,000 s ("623.9s", "4.58s"), then hours, minutes and seconds below 100
// h ("2h46m40s") and days and hours beyond ("7,917d 15h").
func Millis(ms float64) string {
	us := math.Round(ms * 1000)
	switch {
	case math.IsNaN(us) || math.IsInf(us, 0):
		return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
	case math.Abs(us) < 1e6:
		return strconv.FormatFloat(us/1000, 'f', -1, 64) + "ms"
	case math.Abs(us) < 1e10:
		return strconv.FormatFloat(math.Round(us/1000)/1000, 'f', -1, 64) + "s"
	}
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	sec := math.Round(us / 1e6)
	if sec < 100*3600 {
		h, m, s := int64(sec)/3600, int64(sec)/60%60, int64(sec)%60
		return fmt.Sprintf("%s%dh%dm%ds", sign, h, m, s)
	}
	hours := math.Round(sec / 3600)
	days := math.Floor(hours / 24)
	return fmt.Sprintf("%s%sd %dh", sign, Fixed(days, 0), int64(hours-days*24))
}

// Duration formats a wall-clock duration to the second, for progress and
// estimates: "<1s", "12s", "4m05s", "2h03m", "3d 4h" (days from 100 h).
func Duration(d time.Duration) string {
	s := int64(math.Round(d.Seconds()))
	switch {
	case d < time.Second:
		return "<1s"
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 100*3600:
		m := (s + 30) / 60
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
	h := (s + 1800) / 3600
	return fmt.Sprintf("%sd %dh", Count(h/24), h%24)
}

// Bytes formats a size in bytes with binary prefixes and three
// significant digits: "812 B", "21.4 KiB", "1.50 GiB".
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	x := float64(n)
	unit := 0
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for x >= 1024 && unit < len(units)-1 {
		x /= 1024
		unit++
	}
	digits := 2
	switch {
	case x >= 100:
		digits = 0
	case x >= 10:
		digits = 1
	}
	return Fixed(x, digits) + " " + units[unit]
}
