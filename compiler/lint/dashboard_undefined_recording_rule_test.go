package lint

import "testing"

func TestRecordingRuleNamesAreToldFromExporterNamespaces(t *testing.T) {
	for name, want := range map[string]bool{
		"job:vllm_requests:rate5m":                        true,
		"slo:sli_error:ratio_rate1h":                      true,
		"cluster:node_cpu:sum_rate5m":                     true,
		"lmcache:hits":                                    false,
		":tensorflow:serving:request_count":               false,
		"clouddriver:controller:invocations__count_total": false,
		"orca:queue:message_lag_seconds":                  false,
		"front50:storage:cache_bucket":                    false,
	} {
		if got := looksRecorded(name); got != want {
			t.Errorf("looksRecorded(%q) = %v, want %v", name, got, want)
		}
	}
}
