package templates

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FuzzLoad loads any text as an alert and a panel template: Load either
// refuses it or expands it over the samples within the output bound, and
// never allocates more than a bound whatever the text asks for.
func FuzzLoad(f *testing.F) {
	f.Add("SLO [[ .SLO ]] burns [[ range .Windows ]][[ .Factor ]]x [[ end ]]")
	f.Add(`[[ printf "%0*d" 99999 1 ]]`)
	f.Add(`[[ range $i, $p := .Promises ]][[ if $i ]], [[ end ]][[ $p.SLO ]][[ end ]]`)
	f.Add("{{ $value | humanize }}")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxFileSize {
			return
		}
		dir := t.TempDir()
		for _, name := range []string{BurnSummary, PanelBurnRate} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tx, err := Load(dir)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 256<<20 {
			t.Fatalf("loading a %d-byte template allocated %d bytes", len(text), n)
		}
		if err != nil {
			return
		}
		for _, a := range samples() {
			out, err := tx.Alert(BurnSummary, a)
			if err != nil {
				t.Fatalf("a template Load accepted fails on a sample: %v", err)
			}
			if len(out) > maxExpanded {
				t.Fatalf("expanded to %d bytes", len(out))
			}
		}
	})
}
