package model

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number. Targets, thresholds and burn-rate
// factors are kept exact so that generated rules read `0.001`, never
// `0.0009999999999999432`.
type Decimal struct{ r *big.Rat }

// ParseDecimal reads a plain decimal ("0.99", "14.4") or a percentage ("99.9%").
func ParseDecimal(s string) (Decimal, error) {
	t := strings.TrimSpace(s)
	percent := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	if t == "" || strings.ContainsAny(t, "/eE") {
		return Decimal{}, fmt.Errorf("%q is not a decimal number", s)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return Decimal{}, fmt.Errorf("%q is not a decimal number", s)
	}
	if percent {
		r.Quo(r, big.NewRat(100, 1))
	}
	return Decimal{r}, nil
}

// DecimalFromFloat converts a float by its shortest decimal representation,
// which is what a human wrote in YAML (0.999 stays 0.999).
func DecimalFromFloat(f float64) Decimal {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return Decimal{r}
}

// NewDecimal returns the exact value a/b.
func NewDecimal(a, b int64) Decimal { return Decimal{big.NewRat(a, b)} }

func (d Decimal) rat() *big.Rat {
	if d.r == nil {
		return new(big.Rat)
	}
	return d.r
}

// IsZero tells whether d is zero (or unset).
func (d Decimal) IsZero() bool { return d.rat().Sign() == 0 }

// Sub returns d - e.
func (d Decimal) Sub(e Decimal) Decimal { return Decimal{new(big.Rat).Sub(d.rat(), e.rat())} }

// Mul returns d × e.
func (d Decimal) Mul(e Decimal) Decimal { return Decimal{new(big.Rat).Mul(d.rat(), e.rat())} }

// Quo returns d / e; e must not be zero.
func (d Decimal) Quo(e Decimal) Decimal { return Decimal{new(big.Rat).Quo(d.rat(), e.rat())} }

// Cmp compares d and e like strings.Compare.
func (d Decimal) Cmp(e Decimal) int { return d.rat().Cmp(e.rat()) }

// Float returns the nearest float64.
func (d Decimal) Float() float64 {
	f, _ := d.rat().Float64()
	return f
}

// String prints the exact decimal when it terminates within 12 fractional
// digits, else rounds to 12 digits (only reachable for values like 1/3).
func (d Decimal) String() string {
	r := d.rat()
	if r.IsInt() {
		return r.Num().String()
	}
	if s, ok := shortDecimal(r); ok {
		return s
	}
	s := r.FloatString(12)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// shortDecimal prints r with int64 arithmetic when its numerator and
// denominator fit and it terminates within 12 fractional digits, as
// targets and factors do (0.999, 14.4): String without big.Int work.
func shortDecimal(r *big.Rat) (string, bool) {
	if !r.Num().IsInt64() || !r.Denom().IsInt64() {
		return "", false
	}
	num, den := r.Num().Int64(), r.Denom().Int64()
	neg := num < 0
	if neg {
		num = -num
	}
	for k, p := 0, int64(1); k <= 12; k, p = k+1, p*10 {
		if p%den != 0 {
			continue
		}
		m := p / den
		if num > math.MaxInt64/m {
			return "", false
		}
		digits := strconv.FormatInt(num*m, 10)
		if len(digits) <= k {
			digits = strings.Repeat("0", k-len(digits)+1) + digits
		}
		s := strings.TrimRight(digits[:len(digits)-k]+"."+digits[len(digits)-k:], "0")
		s = strings.TrimSuffix(s, ".")
		if neg {
			s = "-" + s
		}
		return s, true
	}
	return "", false
}

// Percent prints d as a percentage ("99.9%").
func (d Decimal) Percent() string {
	return d.Mul(NewDecimal(100, 1)).String() + "%"
}

// MarshalText lets decimals print exactly in YAML and JSON.
func (d Decimal) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// CheckObjective rejects targets outside (0, 1).
func CheckObjective(d Decimal) error {
	if d.Cmp(NewDecimal(0, 1)) <= 0 || d.Cmp(NewDecimal(1, 1)) >= 0 {
		return fmt.Errorf("target %s is not between 0 and 1 (exclusive); write 0.99 or 99%% for 99%%", d)
	}
	return nil
}
