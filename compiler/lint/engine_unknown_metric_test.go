package lint

import "testing"

func TestRealEngineMetricsOutsideTheSLIsAreKnown(t *testing.T) {
	res := lintFiles(t, Options{}, "testdata/known/disaggregation.rules.yaml")
	if len(res.Findings) != 0 {
		t.Errorf("findings on real SGLang and vLLM NIXL metrics: %+v", res.Findings)
	}
}
