package prom

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/artifact"
)

const spanRules = `groups:
- name: g
  interval: 1m
  rules:
  - record: r
    expr: x * 2
  - record: s
    expr: sum by (k) (rate(r[3m]))
  - alert: A
    expr: r > 50
    for: 2m
    labels: {severity: page}
`

// spanHarness evaluates spanRules over x{k="a"}, which climbs, and
// x{k="b"}, which stops at 20m: r's series for b goes stale and A fires
// for a. It returns, for every step, the alert states and what r and s
// answer. After change, when positive, x{k="a"} stops and x{k="b"} is
// back at 1 from 30m; with copy set, the first span stops at change and a copy
// at that step (CopyAt) carries on with the changed traffic, the span's
// own going on unchanged.
func spanHarness(t *testing.T, stepwise bool, spans []time.Duration, change time.Duration, copy bool) []string {
	t.Helper()
	x, err := IndexRules(artifact.Set{{Path: "r.yaml", Data: []byte(spanRules)}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewIndexedHarness(x, false, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { h.Close() }()
	h.Stepwise = stepwise
	if got := h.Spans(); got == stepwise {
		t.Fatalf("spans %v with stepwise %v", got, stepwise)
	}
	next := -10 * time.Minute
	changed := change > 0 && !copy
	advance := func(to time.Duration) error {
		app := h.DB.Appender(context.Background())
		for ; next <= to; next += 15 * time.Second {
			ms := Epoch().Add(next).UnixMilli()
			v := float64(next/time.Second) / 60
			after := changed && next > change
			if !after {
				if _, err := app.Append(0, labels.FromStrings("__name__", "x", "k", "a"), ms, v); err != nil {
					return err
				}
			}
			if next < 20*time.Minute || after && next > 30*time.Minute {
				if _, err := app.Append(0, labels.FromStrings("__name__", "x", "k", "b"), ms, 1); err != nil {
					return err
				}
			}
		}
		return app.Commit()
	}
	var out []string
	each := func(at time.Duration) bool {
		line := fmt.Sprint(at, h.AlertStates())
		for _, q := range []string{"r", "s"} {
			v, err := h.Query(q, at)
			if err != nil {
				t.Fatal(err)
			}
			line += fmt.Sprint(" ", v)
		}
		out = append(out, line)
		return copy && at == change
	}
	from := time.Duration(0)
	for _, to := range spans {
		last, err := h.EvalSpan(from, to, advance, each)
		if err != nil {
			t.Fatal(err)
		}
		if copy && last == change {
			c, err := h.CopyAt(x, change)
			if err != nil {
				t.Fatal(err)
			}
			// The copy reads h beneath its own samples.
			defer h.Close()
			h, next, changed = c, change+15*time.Second, true
			last, err = h.EvalSpan(last+time.Minute, to, advance, each)
			if err != nil {
				t.Fatal(err)
			}
		}
		from = last + time.Minute
	}
	return out
}

func TestSpansWriteWhatEveryStepWrites(t *testing.T) {
	want := spanHarness(t, true, []time.Duration{time.Hour}, -1, false)
	if len(want) != 61 || want[60] == want[0] {
		t.Fatalf("step by step: %d steps, first %s", len(want), want[0])
	}
	// A span may end between steps.
	for _, spans := range [][]time.Duration{{time.Hour}, {20 * time.Minute, 21 * time.Minute, time.Hour}, {22*time.Minute + 30*time.Second, time.Hour}} {
		if got := spanHarness(t, false, spans, -1, false); !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("spans %v: step %d is %s, step by step %s", spans, i, got[i], want[i])
				}
			}
			t.Fatalf("spans %v: %d steps, step by step %d", spans, len(got), len(want))
		}
	}
}

// A rule reading what a rule after it records reads the evaluation
// before: no span can evaluate that group.
// A span stores its scrapes and records its rules up to its end before
// its alerts run, so a run stopped within it leaves more than its steps
// wrote; a copy at the stop reads none of that, and carries on with the
// stale markers and alerts of the steps before.
func TestACopyAtTheStepASpanStoppedAtCarriesOnAsTheRunWould(t *testing.T) {
	// b's last scrape, a step of b's recording before its stale marker,
	// A pending, A firing.
	for _, at := range []time.Duration{20 * time.Minute, 24 * time.Minute, 27 * time.Minute, 40 * time.Minute} {
		want := spanHarness(t, true, []time.Duration{time.Hour}, at, false)
		for _, stepwise := range []bool{false, true} {
			if got := spanHarness(t, stepwise, []time.Duration{time.Hour}, at, true); !reflect.DeepEqual(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("copy at %s (step by step %v): step %d is %s, without the copy %s", at, stepwise, i, got[i], want[i])
					}
				}
				t.Fatalf("copy at %s (step by step %v): %d steps, without the copy %d", at, stepwise, len(got), len(want))
			}
		}
	}
}

func TestAGroupReadingALaterRecordingIsEvaluatedStepByStep(t *testing.T) {
	h, err := NewHarness(map[string][]byte{"r.yaml": []byte(`groups:
- name: g
  rules:
  - record: s
    expr: r + 1
  - record: r
    expr: x
`)}, func(string) bool { return true }, false, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Spans() {
		t.Error("spans a group whose first rule reads the second")
	}
}

// Two series that one recording relabels alike fail the rule at the first
// step both answer, as the rules manager's evaluation does.
func TestARecordingAnsweringOneSeriesTwiceFailsAtThatStep(t *testing.T) {
	h, err := NewHarness(map[string][]byte{"r.yaml": []byte(`groups:
- name: g
  rules:
  - record: r
    expr: x
    labels: {k: same}
`)}, func(string) bool { return true }, false, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	advance := func(to time.Duration) error {
		app := h.DB.Appender(context.Background())
		for at := time.Duration(0); at <= to; at += time.Minute {
			for _, k := range []string{"a", "b"} {
				if k == "b" && at < 5*time.Minute {
					continue
				}
				if _, err := app.Append(0, labels.FromStrings("__name__", "x", "k", k), Epoch().Add(at).UnixMilli(), 1); err != nil {
					return err
				}
			}
		}
		return app.Commit()
	}
	_, err = h.EvalSpan(0, 10*time.Minute, advance, func(time.Duration) bool { return false })
	var ee *EvalError
	if !errors.As(err, &ee) || ee.At != 5*time.Minute {
		t.Fatalf("error %v, want one at 5m", err)
	}
}
