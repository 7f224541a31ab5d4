package querybound

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("(", n) + "up" + strings.Repeat(")", n) }
	tests := []struct {
		name, q string
		want    string // part of the error; "" for none
	}{
		{"a real SLI query passes", `sum(rate(http_requests_total{code=~"5..", job="api"}[5m])) / sum(rate(http_requests_total{job="api"}[5m]))`, ""},
		{"nesting at the bound passes", deep(MaxDepth), ""},
		{"nesting one above the bound is refused", deep(MaxDepth + 1), "nests more than 64"},
		{"a 40,000-deep query is refused", deep(40000), "bytes long"},
		{"an 8,000-deep query is refused", deep(8000), "nests more than 64"},
		{"brackets and braces count as nesting", strings.Repeat("{[", 40), "nests more than 64"},
		{"parentheses in strings do not count", `up{a="` + strings.Repeat("(", 200) + `"}`, ""},
		{"escaped quotes do not end a string", `up{a="\"` + strings.Repeat("(", 200) + `"}`, ""},
		{"parentheses in a comment do not count", "up # " + strings.Repeat("(", 200) + "\n", ""},
		{"a query above the length bound is refused", "up" + strings.Repeat(" or up", MaxLength/6+1), "bytes long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.q)
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzCheck: whatever Check accepts, Prometheus parses within a bounded
// allocation, and Check reads a query in one pass.
func FuzzCheck(f *testing.F) {
	f.Add(`sum(rate(x{a="("}[5m])) # (`)
	f.Add("((((up))))")
	f.Add("`(`")
	f.Add(strings.Repeat("(", MaxDepth) + "up" + strings.Repeat(")", MaxDepth))
	f.Fuzz(func(t *testing.T, q string) {
		if Check(q) != nil {
			return
		}
		if len(q) > MaxLength {
			t.Fatalf("accepted %d bytes", len(q))
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		parser.NewParser(parser.Options{}).ParseExpr(q)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > maxParseAlloc {
			t.Fatalf("parsing an accepted query of %d bytes allocated %d bytes", len(q), n)
		}
	})
}

// maxParseAlloc bounds what parsing an accepted query may allocate: a
// query at MaxLength allocates a few MB.
const maxParseAlloc = 64 << 20

func BenchmarkParseTheWorstAcceptedQuery(b *testing.B) {
	unit := strings.Repeat("(", MaxDepth) + "up" + strings.Repeat(")", MaxDepth) + " + "
	q := strings.Repeat(unit, MaxLength/len(unit)) + "up"
	if err := Check(q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parser.NewParser(parser.Options{}).ParseExpr(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckADeepQuery(b *testing.B) {
	q := strings.Repeat("(", 40000) + "up" + strings.Repeat(")", 40000)
	b.ReportAllocs()
	for b.Loop() {
		if Check(q) == nil {
			b.Fatal("accepted")
		}
	}
}
