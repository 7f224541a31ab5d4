package grafana

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzIndentIsJSONIndent holds indent to json.Indent on any JSON value
// encoding/json writes compactly, the bytes indent is given.
func FuzzIndentIsJSONIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{},[]],"b":"x\"y\\","c":{"d":null}}`, `"{[,:]}"`, `[[[]]]`, `{"a\\":"]"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		var compact bytes.Buffer
		enc := json.NewEncoder(&compact)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indent(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("indent(%s) =\n%s\njson.Indent gives\n%s", compact.Bytes(), got, want.Bytes())
		}
	})
}
