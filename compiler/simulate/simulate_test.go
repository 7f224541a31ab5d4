package simulate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

func TestHandEditedRulesFailNamingAlertAndScenario(t *testing.T) {
	tests := []struct {
		name string
		// edits are old, new pairs replaced in the rule file.
		edits    []string
		scenario string
		subject  string
	}{
		{"a page factor raised 10x makes the fast burn page late", []string{" > 14.4\n", " > 144\n"}, ScenarioFastBurn, `ErrorBudgetBurn{severity="page"}`},
		{"a page factor lowered 10x pages during the slow burn", []string{" > 6\n", " > 0.6\n"}, ScenarioSlowBurn, `ErrorBudgetBurn{severity="page"}`},
		{"a ticket factor lowered 10x fires on healthy traffic", []string{" > 3\n", " > 0.3\n"}, ScenarioHealthy, `ErrorBudgetBurn{severity="ticket"}`},
		{"an average of ratios over the SLO window misses the count-weighted truth",
			[]string{`inferslo:sli_bad_events:rate{slo="chat-errors",window="4w"} / (inferslo:sli_events:rate{slo="chat-errors",window="4w"} > 0)`,
				`label_replace(avg_over_time(inferslo:sli_error:ratio{slo="chat-errors",window="4m40s"}[4w]), "window", "4w", "", "")`},
			ScenarioDayNight, `inferslo:sli_error:ratio{slo="chat-errors",window="4w"}`},
		{"a ratio without the zero-traffic guard records NaN",
			[]string{`/ (inferslo:sli_events:rate{slo="chat-errors",window="4m40s"} > 0)`,
				`/ inferslo:sli_events:rate{slo="chat-errors",window="4m40s"}`},
			ScenarioZeroTraffic, "inferslo:sli_error:ratio"},
		{"bad events summed over a shorter range than their count, through every sums built on them, miss the truth",
			[]string{
				`sum_over_time(inferslo:sli_bad_events:rate{slo="chat-errors",window="4m40s"}[28m])`,
				`sum_over_time(inferslo:sli_bad_events:rate{slo="chat-errors",window="4m40s"}[27m])`},
			ScenarioDayNight, `inferslo:sli_error:ratio{slo="chat-errors",window="4w"}`},
	}
	set := model.Set{SLOs: []model.SLO{slotest.VLLM(t, "errors", "99.9%")}}
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The unedited rules pass the scenarios the edits fail.
	var scenarios []string
	for _, tt := range tests {
		scenarios = append(scenarios, tt.scenario)
	}
	clean, err := RunFiles(set, files, Options{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	if err := clean.Error(); err != nil {
		t.Fatalf("the unedited rules must pass: %v", err)
	}
	// Each edit replays one SLO through one scenario, on one core: the
	// edits replay side by side.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i := 0; i < len(tt.edits); i += 2 {
				if !bytes.Contains(files[0].Data, []byte(tt.edits[i])) {
					t.Fatalf("the rule file has no %q to edit", tt.edits[i])
				}
			}
			edited := []byte(strings.NewReplacer(tt.edits...).Replace(string(files[0].Data)))
			if err := irules.Check(edited); err != nil {
				t.Fatalf("the edited file must still be valid: %v", err)
			}
			files := append(files[:0:0], files...)
			files[0].Data = edited
			r, err := RunFiles(set, files, Options{Scenarios: []string{tt.scenario}})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, c := range r.Failures() {
				if c.Scenario == tt.scenario && c.Subject == tt.subject {
					found = true
				}
			}
			if !found {
				t.Fatalf("no failure for %s in scenario %q; failures: %+v", tt.subject, tt.scenario, r.Failures())
			}
			msg := r.Error().Error()
			if !strings.Contains(msg, tt.subject) || !strings.Contains(msg, `scenario "`+tt.scenario+`"`) {
				t.Errorf("the error does not name the alert and the scenario: %s", msg)
			}
		})
	}
}

func TestResultRendersATableAndJSON(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{slotest.Gateway(t)}}
	// The two scenarios the table and JSON are checked for: every
	// scenario's checks render through the same code, and the others
	// (the slow burn alone replays hours) are proven elsewhere.
	r, err := Run(set, Options{Scenarios: []string{ScenarioFastBurn, ScenarioDayNight}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Error(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SLO", "gateway-availability", ScenarioFastBurn, ScenarioDayNight, "fired after", "0 failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Pass   bool `json:"pass"`
		Checks []struct {
			Scenario  string `json:"scenario"`
			Predicted string `json:"predicted"`
			Delay     string `json:"delay"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Pass || len(back.Checks) != len(r.Checks) {
		t.Fatalf("json round trip lost checks: %s", data)
	}
	timed := false
	for _, c := range back.Checks {
		if c.Scenario == ScenarioFastBurn && c.Predicted != "" && c.Delay != "" {
			timed = true
		}
	}
	if !timed {
		t.Errorf("the fast burn check carries no predicted and observed delay: %s", data)
	}
}

func TestRuleFilesAreReadFromACompileOutputFolder(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{slotest.Gateway(t)}}
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := files.Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	got, err := prom.ReadRuleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != files[0].Path || !bytes.Equal(got[0].Data, files[0].Data) {
		t.Fatalf("read %v, wrote %v", got, files)
	}
	if _, err := prom.ReadRuleFiles(t.TempDir()); err == nil {
		t.Error("an empty folder gave no error")
	}
}

func TestAMissingRuleGroupFailsItsSLOOnce(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{slotest.Gateway(t)}}
	other := slotest.Gateway(t)
	other.Name = "gateway-latency"
	files, err := irules.Build(model.Set{SLOs: []model.SLO{other}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := RunFiles(set, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || r.OK() {
		t.Fatalf("checks: %+v", r.Checks)
	}
	for _, c := range r.Checks {
		if c.Pass || !strings.Contains(c.Observed, "no rule group inferslo-gateway-availability") {
			t.Errorf("check %+v does not name the missing group", c)
		}
	}
}

func TestIntervalsNeedingTooManyStepsAreRefusedNamingTheSpec(t *testing.T) {
	tests := []struct {
		name           string
		eval, scrape   time.Duration
		wantInErrorMsg string
	}{
		{"a 100ms evaluation interval", 100 * time.Millisecond, 30 * time.Second, "evaluation interval 100ms"},
		{"a 100ms scrape interval", time.Minute, 100 * time.Millisecond, "scrape interval 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			slo := slotest.Gateway(t)
			slo.Evaluation, slo.ScrapeInterval = tc.eval, tc.scrape
			_, err := Run(model.Set{SLOs: []model.SLO{slo}}, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{"gateway.yaml: slo gateway-availability", tc.wantInErrorMsg, "must be at least 1s"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestCheckBudgetRefusesSpecsWhoseReplayWouldTakeHours(t *testing.T) {
	tests := []struct {
		name         string
		eval, scrape time.Duration
		want         Interval
		wantMessage  []string
	}{
		{"the default intervals pass", time.Minute, 30 * time.Second, "", nil},
		{"a 2s evaluation interval passes", 2 * time.Second, 30 * time.Second, "", nil},
		{"a 1s evaluation interval is refused at the evaluation interval", time.Second, 30 * time.Second,
			EvaluationInterval, []string{"at the evaluation interval 1s", "valid: an evaluation interval of at least 2s"}},
		{"a 1s scrape interval is refused at the scrape interval", time.Minute, time.Second,
			ScrapeInterval, []string{"at the scrape interval 1s", "valid: a scrape interval of at least 2s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			slo := slotest.VLLM(t, "errors", "99.9%")
			slo.Evaluation, slo.ScrapeInterval = tc.eval, tc.scrape
			iv, msg := CheckBudget(slo, maxSteps)
			if iv != tc.want {
				t.Fatalf("interval %q (%s), want %q", iv, msg, tc.want)
			}
			for _, want := range tc.wantMessage {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestScenariosRestrictARunToTheOnesNamed(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{slotest.VLLM(t, "errors", "99.9%")}}
	r, err := Run(set, Options{Scenarios: []string{ScenarioHealthy, ScenarioReset}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range r.Checks {
		seen[c.Scenario] = true
	}
	if len(seen) != 2 || !seen[ScenarioHealthy] || !seen[ScenarioReset] {
		t.Fatalf("scenarios run: %v; want %s and %s only", seen, ScenarioHealthy, ScenarioReset)
	}
}
