package results

import "bytes"

// indentJSON writes compact JSON src to dst indented by two spaces per
// level, as json.Indent does, except that an array holding no objects or
// arrays stays on one line: a per-window series of 60,000 counts is one
// line, not 60,000.
func indentJSON(dst *bytes.Buffer, src []byte) {
	depth := 0
	newline := func() {
		dst.WriteByte('\n')
		for range depth {
			dst.WriteString("  ")
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i)
			dst.Write(src[i:end])
			i = end - 1
		case '{', '[':
			if end, flat := flatArray(src, i); flat {
				dst.Write(src[i : end+1])
				i = end
				continue
			}
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst.Write(src[i : i+2])
				i++
				continue
			}
			dst.WriteByte(c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst.WriteByte(c)
		case ',':
			dst.WriteByte(',')
			newline()
		case ':':
			dst.WriteString(": ")
		default:
			dst.WriteByte(c)
		}
	}
}

// stringEnd returns the index just past the JSON string starting at src[i].
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// flatArray reports whether src[i] opens an array of scalars only, and
// where it closes.
func flatArray(src []byte, i int) (end int, flat bool) {
	if src[i] != '[' {
		return 0, false
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '"':
			j = stringEnd(src, j) - 1
		case '{', '[':
			return 0, false
		case ']':
			return j, true
		}
	}
	return 0, false
}
