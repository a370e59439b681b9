package safetext

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"a\nb":          `a\nb`,
		"a\r\nb":        `a\r\nb`,
		"tab\tstays":    "tab\tstays",
		"":              "",
		"x\n\n":         `x\n\n`,
		"\x1b[31mred":   "\x1b[31mred", // OneLine only guards line breaks
		"naïve ünïcode": "naïve ünïcode",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerminalEscapesWhatATerminalInterprets(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain name", "seed-lab 1000", "seed-lab 1000"},
		{"unicode letters stay", "Überlast ±5%", "Überlast ±5%"},
		{"escape sequence", "a\x1b[31mred", `a\x1b[31mred`},
		{"newline", "a\nb", `a\nb`},
		{"carriage return", "a\rb", `a\rb`},
		{"tab", "a\tb", `a\tb`},
		{"delete", "a\x7fb", `a\x7fb`},
		{"C1 control", "a\u009bb", `a\u009bb`},
		{"bidi override", "a\u202eb", `a\u202eb`},
		{"invalid UTF-8", "a\xffb", `a\xffb`},
		{"a real replacement character stays", "a\ufffdb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.in); got != tt.want {
				t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
