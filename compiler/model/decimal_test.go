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

// TestSmallDecimalsComputeAsBigRatsDo holds the int64 form to big.Rat:
// for values near and past its edges (18 digits, int64 overflow, repeating
// fractions, signs), every operation gives what big.Rat gives.
func TestSmallDecimalsComputeAsBigRatsDo(t *testing.T) {
	bigString := func(r *big.Rat) string {
		if r.IsInt() {
			return r.Num().String()
		}
		return strings.TrimSuffix(strings.TrimRight(r.FloatString(12), "0"), ".")
	}
	var rats []*big.Rat
	for _, den := range []int64{1, 3, 8, 10, 1000, 8192, 3125, 1e12, 1e13, 1e18, math.MaxInt64} {
		for _, num := range []int64{0, 1, -1, 7, 144, 999, -999, 1e9 + 7, math.MaxInt64 / 1000000, math.MaxInt64, math.MinInt64 + 1} {
			rats = append(rats, big.NewRat(num, den))
		}
	}
	ops := []struct {
		name string
		dec  func(a, b Decimal) Decimal
		rat  func(z, a, b *big.Rat) *big.Rat
	}{
		{"-", Decimal.Sub, (*big.Rat).Sub},
		{"×", Decimal.Mul, (*big.Rat).Mul},
	}
	for _, x := range rats {
		a := fromRat(new(big.Rat).Set(x))
		if got, want := a.String(), bigString(x); got != want {
			t.Errorf("String(%s) = %s, want %s", x, got, want)
		}
		if got, want := a.Float(), func() float64 { f, _ := x.Float64(); return f }(); got != want {
			t.Errorf("Float(%s) = %v, want %v", x, got, want)
		}
		if a.IsZero() != (x.Sign() == 0) {
			t.Errorf("IsZero(%s) = %v", x, a.IsZero())
		}
		for _, y := range rats {
			b := fromRat(new(big.Rat).Set(y))
			if got, want := a.Cmp(b), x.Cmp(y); got != want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", x, y, got, want)
			}
			for _, op := range ops {
				got, want := op.dec(a, b), op.rat(new(big.Rat), x, y)
				if got.rat().Cmp(want) != 0 || got.String() != bigString(want) {
					t.Errorf("%s %s %s = %s, want %s", x, op.name, y, got.rat(), want)
				}
			}
		}
	}
	if d := NewDecimal(999, 1000); d.big != nil {
		t.Error("0.999 is not held small")
	}
	if d := NewDecimal(1, 3); d.big == nil {
		t.Error("1/3 is held small")
	}
}
