package model

import "testing"

func TestDecimalsPrintExactly(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a percentage becomes a ratio", "99.9%", "0.999"},
		{"a ratio stays as written", "0.995", "0.995"},
		{"a whole percentage", "99%", "0.99"},
		{"many nines keep every digit", "99.9995%", "0.999995"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDecimal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	budget := NewDecimal(1, 1).Sub(DecimalFromFloat(0.999))
	if got := budget.String(); got != "0.001" {
		t.Errorf("1 - 0.999 = %s, want 0.001", got)
	}
	if got := NewDecimal(144, 10).Mul(budget).String(); got != "0.0144" {
		t.Errorf("14.4 x 0.001 = %s, want 0.0144", got)
	}
}

func TestNonDecimalsAreRejected(t *testing.T) {
	for _, in := range []string{"", "abc", "1/3", "1e-3", "%"} {
		if _, err := ParseDecimal(in); err == nil {
			t.Errorf("ParseDecimal(%q) accepted it", in)
		}
	}
}
