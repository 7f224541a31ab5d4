package model

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

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

// TestTheInt64PathPrintsAsTheBigPathDoes holds shortDecimal to the
// big.Rat printing it stands in for, over terminating and repeating
// fractions, signs, and the 12-digit edge.
func TestTheInt64PathPrintsAsTheBigPathDoes(t *testing.T) {
	bigPath := func(r *big.Rat) string {
		if r.IsInt() {
			return r.Num().String()
		}
		return strings.TrimSuffix(strings.TrimRight(r.FloatString(12), "0"), ".")
	}
	dens := []int64{1, 2, 3, 4, 5, 7, 8, 10, 16, 20, 25, 40, 100, 125, 1000, 1024, 4096, 8192, 3125, 1e12, 1e13, 2e12}
	nums := []int64{0, 1, -1, 3, 7, 9, 10, 99, 144, 999, -999, 12345, 1e9 + 7, math.MaxInt64 / 1000000, math.MaxInt64}
	for _, den := range dens {
		for _, num := range nums {
			r := big.NewRat(num, den)
			want := bigPath(r)
			if got := (Decimal{r}).String(); got != want {
				t.Errorf("%d/%d: String() = %s, the big path prints %s", num, den, got, want)
			}
			if s, ok := shortDecimal(r); ok && s != want {
				t.Errorf("%d/%d: shortDecimal = %s, the big path prints %s", num, den, s, want)
			}
		}
	}
	if _, ok := shortDecimal(big.NewRat(999, 1000)); !ok {
		t.Error("0.999 does not take the int64 path")
	}
}
