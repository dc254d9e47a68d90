package resourceversion

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"12345", 12345, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"0x10", 0, false},
		{"rv-14", 0, false},
		{" 1", 0, false},
	} {
		if got, ok := Parse(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %d, %t; want %d, %t", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
