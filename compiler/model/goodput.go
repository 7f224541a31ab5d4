package model

import (
	"slices"
	"strings"
	"time"
)

// GoodputPair is a TTFT SLO and a TPOT SLO of one service on the same
// engine series (engine, selector, groups): the share of requests within
// both thresholds, goodput, lies between the bounds their error ratios give.
type GoodputPair struct {
	TTFT, TPOT SLO
}

// Name is the value of the slo label on the pair's goodput series.
func (p GoodputPair) Name() string { return p.TTFT.Name + "+" + p.TPOT.Name }

// Windows are the windows the bounds are recorded over: the base window
// (goodput now) and the SLO window, each when both SLOs record it.
func (p GoodputPair) Windows() []time.Duration {
	var out []time.Duration
	for _, w := range []time.Duration{p.TTFT.BaseWindow(), p.TTFT.Window} {
		if slices.Contains(p.TPOT.Windows(), w) && slices.Contains(p.TTFT.Windows(), w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// GoodputPairs finds the goodput pairs among one service's SLOs. Both
// histograms observe each request once (TPOT per request, unlike ITL's
// per-step observations), so their shares are shares of the same requests.
// Time-slice and calendar SLOs record no comparable ratios and pair with
// nothing.
func GoodputPairs(slos []SLO) []GoodputPair {
	key := func(s SLO) (string, bool) {
		inf := s.Inference
		if inf == nil || s.Timeslices != nil || s.Calendar != nil || s.SLI.Raw != nil {
			return "", false
		}
		return strings.Join([]string{s.Service.Name, inf.Engine, inf.EngineVersion, inf.Selector, strings.Join(s.GroupBy, ","), s.SLOTier}, "\x00"), true
	}
	var out []GoodputPair
	for _, t := range slos {
		kt, ok := key(t)
		if !ok || t.Inference.Role != "ttft" {
			continue
		}
		for _, p := range slos {
			if kp, ok := key(p); ok && p.Inference.Role == "tpot" && kp == kt {
				pair := GoodputPair{TTFT: t, TPOT: p}
				if len(pair.Windows()) > 0 {
					out = append(out, pair)
				}
			}
		}
	}
	return out
}
