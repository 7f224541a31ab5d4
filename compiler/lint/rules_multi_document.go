package lint

var checkMultiDocument = Check{
	ID: "rules/multi-document", Severity: Warning,
	Summary: "A rule file holds more than one YAML document: Prometheus loads only the first, so the groups after it are never evaluated.",
}
