package model

import (
	"math/rand/v2"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
)

// TestDurationsPrintAsPrometheusPrintsThem holds FormatDuration to
// model.Duration's String over whole units, mixed units, milliseconds and
// signs.
func TestDurationsPrintAsPrometheusPrintsThem(t *testing.T) {
	ds := []time.Duration{0, time.Millisecond, time.Second, 4*time.Minute + 40*time.Second, 28 * 24 * time.Hour, 90 * 24 * time.Hour,
		365 * 24 * time.Hour, 366 * 24 * time.Hour, 7 * 24 * time.Hour, 67*time.Hour + 12*time.Minute, -time.Hour, time.Microsecond}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		ds = append(ds, time.Duration(r.Int64N(int64(800*24*time.Hour)))/time.Millisecond*time.Millisecond)
	}
	for _, d := range ds {
		if got, want := FormatDuration(d), prommodel.Duration(d).String(); got != want {
			t.Errorf("FormatDuration(%v) = %s, Prometheus prints %s", d, got, want)
		}
	}
}
