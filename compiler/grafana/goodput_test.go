package grafana

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/templates"
)

func TestTheServiceDashboardDrawsGoodputBoundsOfEachTTFTAndTPOTPair(t *testing.T) {
	for _, tc := range []struct {
		name, role string
		want       []string // queries of the goodput panel; none: no panel
	}{
		{"a TTFT and a TPOT SLO get both bounds over the base and SLO windows", "tpot", []string{
			`inferslo:goodput:lower{slo="chat-ttft+chat-tpot",window="5m"}`, `inferslo:goodput:upper{slo="chat-ttft+chat-tpot",window="5m"}`,
			`inferslo:goodput:lower{slo="chat-ttft+chat-tpot",window="4w"}`, `inferslo:goodput:upper{slo="chat-ttft+chat-tpot",window="4w"}`}},
		{"ITL, one observation per decode step, bounds no goodput", "itl", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slos := []model.SLO{vllmSLO(t, "ttft", "0.25", "0.99"), vllmSLO(t, tc.role, "0.05", "0.99")}
			text, err := templates.Load("")
			if err != nil {
				t.Fatal(err)
			}
			d, err := serviceDashboard("chat", slos, &words{text: text, service: "chat"}, newQueries())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, item := range d.Panels {
				if p, ok := item.(panel); ok && strings.HasPrefix(p.Title, "Goodput bounds") {
					for _, tg := range p.Targets {
						got = append(got, tg.Expr)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("goodput queries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// Every series the panel reads is one the rules record.
			services, err := rules.Services(model.Set{SLOs: slos}, nil)
			if err != nil {
				t.Fatal(err)
			}
			recorded := map[string]bool{}
			for _, g := range services[0].Groups {
				for _, r := range g.Rules {
					if r.Record != "" {
						recorded[r.Record+"/"+r.Labels[model.LabelSLO]+"/"+r.Labels[model.LabelWindow]] = true
					}
				}
			}
			for _, q := range got {
				name, rest, _ := strings.Cut(q, `{slo="`)
				slo, rest, _ := strings.Cut(rest, `",window="`)
				window, _, _ := strings.Cut(rest, `"`)
				if !recorded[name+"/"+slo+"/"+window] {
					t.Errorf("the panel reads %s, which no rule records", q)
				}
			}
		})
	}
}
