package safetext

import (
	"strings"
	"testing"
)

func TestCredentialsInFreeTextAreHidden(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"a user and password in a URL", "fetch https://bot:s3cret@prom.example.com/metrics failed", "fetch https://xxxxx@prom.example.com/metrics failed"},
		{"a query parameter named like a secret", "http://prom:9090/metrics?token=s3cret&x=1", "http://prom:9090/metrics?token=xxxxx&x=1"},
		{"a URL without credentials is kept", "see https://example.com/runbook", "see https://example.com/runbook"},
	} {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestAPrintedURLHidesItsPasswordUserAndQueryValues(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"a password", "https://admin:hunter2@prom.example.com:9090/", "https://admin:xxxxx@prom.example.com:9090/"},
		{"a user name alone, which may be a token", "https://tok3n@prom.example.com/", "https://xxxxx@prom.example.com/"},
		{"every query value", "http://prom/?x=1&api=s3cret", "http://prom/?api=xxxxx&x=xxxxx"},
		{"a fragment", "http://prom/#s3cret", "http://prom/"},
		{"text that is no URL is not echoed", "http://[::1%s3cret", "the URL given"},
	} {
		got := URL(tt.in)
		if got != tt.want || strings.Contains(got, "s3cret") || strings.Contains(got, "hunter2") || strings.Contains(got, "tok3n") {
			t.Errorf("%s: URL(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestQuotedTextCannotDriveATerminalOrGrowUnbounded(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"an escape sequence", "\x1b[2J\x1b[31mred", `"\x1b[2J\x1b[31mred"`},
		{"a line break that would forge a row", "ok\nslo chat  0 alerts", `"ok\nslo chat  0 alerts"`},
		{"bytes that are not UTF-8", "a\xffb", `"a\xffb"`},
	} {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("%s: Quote(%q) = %s, want %s", tt.name, tt.in, got, tt.want)
		}
	}
	long := Quote(strings.Repeat("é", 30<<20))
	if len(long) > MaxQuoted+40 || !strings.HasSuffix(long, "… (62914560 bytes)") {
		t.Errorf("a 30 MB text quoted to %d bytes: %.80s…%s", len(long), long, long[len(long)-30:])
	}
}

func TestPrintableTextKeepsWordsAndDropsControls(t *testing.T) {
	if got := Printable("bad\x1b[31m line\nnext\xff"); got != "bad?[31m line?next?" {
		t.Errorf("Printable = %q", got)
	}
	if got := HideQuoted(`parsing "OPENAI_API_KEY=sk-1": expected 'x' near 'secret'`); got != `parsing "…": expected 'x' near '…'` {
		t.Errorf("HideQuoted = %q", got)
	}
}
