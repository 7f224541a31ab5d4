package simulate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

func TestRawRatioSLIsAreReportedNotSimulated(t *testing.T) {
	slo := slotest.Gateway(t)
	slo.SLI = model.SLI{Raw: &model.Query{Expr: `avg(availability{job="gateway"})`}, RawType: "success"}
	r, err := Run(model.Set{SLOs: []model.SLO{slo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || !r.Checks[0].NotProven || !strings.Contains(r.Checks[0].Observed, "raw-ratio") {
		t.Fatalf("checks: %+v", r.Checks)
	}
	if len(r.Unproven()) != 1 || !r.OK() {
		t.Fatalf("a raw-ratio SLI is neither failed nor proven: unproven %d, ok %v", len(r.Unproven()), r.OK())
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 checks, 0 failed, 1 not proven") || !strings.Contains(b.String(), "NOT PROVEN: SLO "+slo.Name) {
		t.Fatalf("table does not say the SLO is not proven:\n%s", b.String())
	}
}
