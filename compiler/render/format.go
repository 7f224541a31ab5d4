package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue prints a value in a Grafana unit.
func formatValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch {
	case unit == "s":
		if a := math.Abs(v); a > 0 && a < 1 {
			return trimNum(fmt.Sprintf("%.3g", v*1000)) + " ms"
		}
		return trimNum(fmt.Sprintf("%.3g", v)) + " s"
	case unit == "percentunit":
		return trimNum(fmt.Sprintf("%.4g", v*100)) + "%"
	case unit == "reqps":
		return si(v) + " req/s"
	case strings.HasPrefix(unit, "suffix:"):
		return si(v) + strings.TrimPrefix(unit, "suffix:")
	}
	return si(v)
}

// si prints a number with a k/M/G suffix and three significant digits.
func si(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimNum(fmt.Sprintf("%.3g", v/1e9)) + "G"
	case a >= 1e6:
		return trimNum(fmt.Sprintf("%.3g", v/1e6)) + "M"
	case a >= 1e4:
		return trimNum(fmt.Sprintf("%.3g", v/1e3)) + "k"
	}
	return trimNum(fmt.Sprintf("%.3g", v))
}

// trimNum turns %g output with an exponent into plain digits.
func trimNum(s string) string {
	if !strings.ContainsAny(s, "e") {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// niceTicks returns round tick values covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9; v += step {
		// Rounding keeps 0.30000000000000004 out of the labels.
		out = append(out, math.Round(v/step)*step)
	}
	if out[len(out)-1] < hi-step*1e-9 {
		out = append(out, out[len(out)-1]+step)
	}
	return out
}

// timeTicks returns round times within [from, to], at most max of them.
func timeTicks(from, to time.Time, max int) []time.Time {
	if max < 2 {
		max = 2
	}
	d := to.Sub(from)
	steps := []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
		3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if int(d/s) < max {
			step = s
			break
		}
	}
	var out []time.Time
	for t := from.UTC().Truncate(step); !t.After(to); t = t.Add(step) {
		if !t.Before(from) {
			out = append(out, t)
		}
	}
	return out
}

// timeLabel prints a tick: the date at midnight or for day steps, the time
// of day otherwise, so labels stay short.
func timeLabel(t time.Time, step time.Duration) string {
	t = t.UTC()
	if step >= 24*time.Hour || (t.Hour() == 0 && t.Minute() == 0) {
		return t.Format("Jan 2")
	}
	return t.Format("15:04")
}

// f1 prints an SVG coordinate.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// palette colours the i-th of a panel's n series: Grafana's classic ten
// while they suffice, else hues a golden angle apart (never the same twice)
// in three lightnesses, so no two series of a panel share a colour.
func palette(i, n int) string {
	colors := []string{"#3274d9", "#56a64b", "#e0b400", "#ff780a", "#8f3bb8", "#19b3b3", "#c4162a", "#6e9fff", "#a16d00", "#7f7f7f"}
	if n <= len(colors) {
		return colors[i%len(colors)]
	}
	hue := math.Mod(float64(i)*137.508, 360)
	light := []float64{0.58, 0.45, 0.70}[i%3]
	return hslHex(hue, 0.65, light)
}

// hslHex is the #rrggbb of a hue in degrees, a saturation and a lightness.
func hslHex(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	to := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

// cssColor maps Grafana's colour names to the page's, and refuses anything
// that is not a plain colour so it cannot break out of an attribute.
func cssColor(name string) string {
	switch name {
	case "red":
		return "#d44a3a"
	case "orange":
		return "#ff9830"
	case "green":
		return "#56a64b"
	case "yellow":
		return "#e0b400"
	case "blue":
		return "#3274d9"
	}
	for _, r := range name {
		if !(r == '#' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "#7f7f7f"
		}
	}
	if name == "" {
		return "#7f7f7f"
	}
	return name
}
