package model

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number. Targets, thresholds and burn-rate
// factors are kept exact so that generated rules read `0.001`, never
// `0.0009999999999999432`.
//
// A value that is m/10^s for an int64 m and s <= 18 (every target, factor
// and budget a spec writes) is held as m and s, whose arithmetic allocates
// nothing; any other (1/3, or past int64) is a big.Rat. The zero value is 0.
type Decimal struct {
	m   int64
	s   uint8
	big *big.Rat
}

// maxScale is the most fractional digits a small decimal holds; 10^18
// fits an int64.
const maxScale = 18

// pow10 is 10^k for k <= maxScale.
func pow10(k int) int64 {
	p := int64(1)
	for range k {
		p *= 10
	}
	return p
}

// small returns m/10^s in its one form (no trailing zero in m when s > 0),
// or false when s is out of range.
func small(m int64, s int) (Decimal, bool) {
	for s > 0 && m%10 == 0 {
		m /= 10
		s--
	}
	if s < 0 || s > maxScale {
		return Decimal{}, false
	}
	return Decimal{m: m, s: uint8(s)}, true
}

// fromRat holds r small when it is, else as it is.
func fromRat(r *big.Rat) Decimal {
	if r.Num().IsInt64() && r.Denom().IsInt64() {
		if d, ok := fraction(r.Num().Int64(), r.Denom().Int64()); ok {
			return d
		}
	}
	return Decimal{big: r}
}

// fraction is a/b (b > 0) as a small decimal, when b divides a power of ten
// up to 10^18 and the result fits.
func fraction(a, b int64) (Decimal, bool) {
	for k := 0; k <= maxScale; k++ {
		p := pow10(k)
		if p%b != 0 {
			continue
		}
		m, ok := mul64(a, p/b)
		if !ok {
			return Decimal{}, false
		}
		return small(m, k)
	}
	return Decimal{}, false
}

// mul64 is a×b, false on overflow.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// aligned returns d's and e's m at a common scale, false on overflow.
func aligned(d, e Decimal) (a, b int64, s int, ok bool) {
	s = int(max(d.s, e.s))
	a, ok1 := mul64(d.m, pow10(s-int(d.s)))
	b, ok2 := mul64(e.m, pow10(s-int(e.s)))
	return a, b, s, ok1 && ok2
}

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
	return fromRat(r), nil
}

// DecimalFromFloat converts a float by its shortest decimal representation,
// which is what a human wrote in YAML (0.999 stays 0.999).
func DecimalFromFloat(f float64) Decimal {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return fromRat(r)
}

// NewDecimal returns the exact value a/b.
func NewDecimal(a, b int64) Decimal {
	if b > 0 {
		if d, ok := fraction(a, b); ok {
			return d
		}
	}
	return fromRat(big.NewRat(a, b))
}

func (d Decimal) rat() *big.Rat {
	if d.big != nil {
		return d.big
	}
	return new(big.Rat).SetFrac(big.NewInt(d.m), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.s)), nil))
}

// IsZero tells whether d is zero (or unset).
func (d Decimal) IsZero() bool {
	if d.big == nil {
		return d.m == 0
	}
	return d.big.Sign() == 0
}

// Sub returns d - e.
func (d Decimal) Sub(e Decimal) Decimal {
	if d.big == nil && e.big == nil {
		if a, b, s, ok := aligned(d, e); ok && (b >= 0 && a >= math.MinInt64+b || b < 0 && a <= math.MaxInt64+b) {
			if r, ok := small(a-b, s); ok {
				return r
			}
		}
	}
	return fromRat(new(big.Rat).Sub(d.rat(), e.rat()))
}

// Mul returns d × e.
func (d Decimal) Mul(e Decimal) Decimal {
	if d.big == nil && e.big == nil {
		if m, ok := mul64(d.m, e.m); ok {
			if r, ok := small(m, int(d.s)+int(e.s)); ok {
				return r
			}
		}
	}
	return fromRat(new(big.Rat).Mul(d.rat(), e.rat()))
}

// Quo returns d / e.
func (d Decimal) Quo(e Decimal) Decimal { return fromRat(new(big.Rat).Quo(d.rat(), e.rat())) }

// Cmp compares d and e like strings.Compare.
func (d Decimal) Cmp(e Decimal) int {
	if d.big == nil && e.big == nil {
		if a, b, _, ok := aligned(d, e); ok {
			return cmp.Compare(a, b)
		}
	}
	return d.rat().Cmp(e.rat())
}

// Float returns the nearest float64.
func (d Decimal) Float() float64 {
	// m and 10^s exact as floats make their IEEE quotient the nearest
	// float64 to m/10^s.
	if d.big == nil && d.m < 1<<53 && d.m > -(1<<53) {
		return float64(d.m) / float64(pow10(int(d.s)))
	}
	f, _ := d.rat().Float64()
	return f
}

// String prints the exact decimal when it terminates within 12 fractional
// digits, else rounds to 12 digits (only reachable for values like 1/3).
func (d Decimal) String() string {
	if d.big == nil && d.s <= 12 {
		digits := strconv.FormatInt(d.m, 10)
		if d.s == 0 {
			return digits
		}
		neg := d.m < 0
		digits = strings.TrimPrefix(digits, "-")
		k := int(d.s)
		if len(digits) <= k {
			digits = strings.Repeat("0", k-len(digits)+1) + digits
		}
		s := digits[:len(digits)-k] + "." + digits[len(digits)-k:]
		if neg {
			s = "-" + s
		}
		return s
	}
	r := d.rat()
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(12)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
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
