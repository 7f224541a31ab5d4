package simulate

import (
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// simOf simulates slo against the rules compiled from written (the same
// SLO, or one whose rules differ), with the default options.
func simOf(t testing.TB, slo, written model.SLO) *sloSim {
	t.Helper()
	files, err := irules.Build(model.Set{SLOs: []model.SLO{written}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := prom.IndexRules(files)
	if err != nil {
		t.Fatal(err)
	}
	return &sloSim{slo: slo, rules: x.ByName()[irules.GroupName(slo)], opts: Options{}.withDefaults()}
}
