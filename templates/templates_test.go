package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryBuiltInTemplateIsEmbeddedAndValid(t *testing.T) {
	text, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		out, err := expand(text, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out == "" || strings.HasSuffix(out, "\n") {
			t.Errorf("%s expands to %q; want one paragraph without a final line break", name, out)
		}
	}
	entries, err := builtin.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(Names()) {
		t.Errorf("%d embedded files for %d template names: every file needs a name, every name a file", len(entries), len(Names()))
	}
}

func TestAnOverrideReplacesOnlyTheTemplateOfItsName(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, NoDataSummary, "SLO [[ .SLO ]] lost its metrics; see [[ .RunbookURL ]]\n")
	builtIn, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	text, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		got, err := expand(text, name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := expand(builtIn, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == NoDataSummary {
			want = "SLO chat-ttft lost its metrics; see https://runbooks.example.com/chat"
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestSpecStringsAreInsertedAsDataNotTemplateCode(t *testing.T) {
	text, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	data := samples()[0]
	data.SLO = "[[ .Service ]]"
	got, err := text.Alert(MisconfiguredSummary, data)
	if err != nil {
		t.Fatal(err)
	}
	if want := "SLO [[ .Service ]] is misconfigured: a threshold bucket is missing"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBrokenTemplatesAreErrorsNamingTheFileAndLine(t *testing.T) {
	for _, tt := range []struct {
		name, file, text, want string
	}{
		{"an unclosed inferslo action names its line", BurnSummary,
			"first\nsecond\n[[ .Nope\n", "/" + BurnSummary + ":3: unclosed action"},
		{"an unclosed Prometheus action names its line after expansion", BurnDescription,
			"SLO [[ .SLO ]]\nburns\n{{ .Nope\n", "/" + BurnDescription + ":3: the expanded text is not a valid Prometheus alert template: unclosed action"},
		{"a Prometheus function that does not exist names its line", NoDataSummary,
			"{{ $value | shout }}", "/" + NoDataSummary + ":1: the expanded text is not a valid Prometheus alert template: function \"shout\" not defined"},
		{"a field the data does not have names its line and column", NoDataDescription,
			"SLO\n[[ .Nope ]]", "/" + NoDataDescription + ":2:3: executing \"" + NoDataDescription + "\" at <.Nope>: can't evaluate field Nope"},
		{"a control character names its line", MisconfiguredSummary,
			"ok\nbell \a here", "/" + MisconfiguredSummary + ":2: control character U+0007"},
		{"a carriage return inside the text is refused", MisconfiguredSummary,
			"one\r\ntwo\n", "/" + MisconfiguredSummary + ":1: control character U+000D"},
		{"a control character printed by the template is refused", BurnSummary,
			"ok\n[[ printf \"%c\" 27 ]][2J", "/" + BurnSummary + ": the expanded text, line 2: control character U+001B"},
		{"a loop over a number is refused, so no loop runs long without writing", PanelBurnRate,
			"ok\n[[ range 1000000000000 ]][[ end ]]", "/" + PanelBurnRate + ":2:9: a range goes over a list of the data"},
		{"a loop in a loop is refused", BurnDescription,
			"[[ range .Windows ]][[ range $.Windows ]][[ end ]][[ end ]]", "/" + BurnDescription + ":1:29: a range may not hold another range"},
		{"a template calling itself is refused", BurnDescription,
			`[[ define "x" ]][[ template "x" ]][[ end ]][[ template "x" ]]`, "/" + BurnDescription + ": a template may not define templates"},
		{"a printf width that would allocate a gigabyte is refused", BurnSummary,
			`[[ printf "%0999999999d" 1 ]]`, "/" + BurnSummary + ":1:3: executing \"" + BurnSummary + "\" at <printf \"%0999999999d\" 1>: error calling printf: printf width or precision 0999999999 is above 1000"},
		{"a loop over the data expanding past the output bound stops there", BurnSummary,
			"[[ range .Windows ]][[ printf \"%999s\" \"\" ]][[ printf \"%999s\" \"\" ]][[ end ]]" + strings.Repeat("[[ printf \"%999s\" \"\" ]]", 70), "/" + BurnSummary + ": the template expands to more than 64 KB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tt.file, tt.text)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), dir+tt.want) {
				t.Fatalf("Load() error = %v, want one containing %q", err, dir+tt.want)
			}
		})
	}
}

func TestAFileOfAnUnknownNameIsAnErrorListingTheNames(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "alert-burn-sumary.tmpl", "typo")
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "alert-burn-sumary.tmpl, which no template is named; the templates are "+strings.Join(Names(), ", ")) {
		t.Fatalf("Load() error = %v", err)
	}
}

func TestAMissingFolderOrAFolderNamedLikeATemplateIsAnError(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "read templates") {
		t.Errorf("missing folder: error = %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, BurnSummary), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("folder named like a template: error = %v", err)
	}
}

func TestOneFinalLineBreakIsNotPartOfTheText(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, NoDataSummary, "two\nlines\n")
	text, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := text.Alert(NoDataSummary, samples()[0])
	if err != nil {
		t.Fatal(err)
	}
	if got != "two\nlines" {
		t.Errorf("got %q, want %q", got, "two\nlines")
	}
}

// expand fills a template with the first sample of its kind.
func expand(text *Text, name string) (string, error) {
	if isAlert(name) {
		return text.Alert(name, samples()[0])
	}
	return text.Panel(name, panelSamples()[0])
}

func TestAPanelOverrideIsCheckedOverEveryPanelShape(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, PanelLatency, "[[ (index .Promises 0).SLO ]] promises a bound")
	_, err := Load(dir)
	if want := "/" + PanelLatency + ":1:4: executing"; err == nil || !strings.Contains(err.Error(), dir+want) {
		t.Fatalf("Load() error = %v, want one containing %q: a latency panel without SLO thresholds has no promise", err, dir+want)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
