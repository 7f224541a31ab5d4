package artifact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFirstMarkerFindsWhatALineByLineScanFinds holds firstMarker, which
// searches for marker lines, to reading every line in turn, over random
// texts of markers, near-markers and content.
func TestFirstMarkerFindsWhatALineByLineScanFinds(t *testing.T) {
	pieces := []string{"---", "...", "----", "--- x", "...\t", "---\r", "..x", "a: 1", "# c", "", " ---", "- a", ".", "--"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		lines := make([]string, r.IntN(8))
		for j := range lines {
			lines[j] = pieces[r.IntN(len(pieces))]
		}
		data := []byte(strings.Join(lines, "\n"))
		wantAt, wantM := -1, ""
		offset := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if isMarker(l, "---") || isMarker(l, "...") {
				wantAt, wantM = offset, string(l[:3])
				break
			}
			offset += len(l) + 1
		}
		if at, m := firstMarker(data); at != wantAt || m != wantM {
			t.Fatalf("case %d: firstMarker(%q) = %d, %q; a line by line scan finds %d, %q", i, data, at, m, wantAt, wantM)
		}
	}
}
