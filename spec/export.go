package spec

import (
	"bytes"
	"fmt"

	"github.com/inferslo/inferslo/spec/input"

	"github.com/OpenSLO/go-sdk/pkg/openslosdk"

	"github.com/inferslo/inferslo/spec/engine"
)

// Export returns the specs as plain OpenSLO v1 YAML: shorthand documents
// expanded, OpenSLO objects as they are. The result passes go-sdk validation
// and compiles to the same rules as the input.
func Export(paths ...string) ([]byte, Problems, error) {
	sources, err := ReadFiles(paths...)
	if err != nil {
		return nil, nil, err
	}
	cat, err := engine.Load()
	if err != nil {
		return nil, nil, err
	}
	l := newLoader(cat)
	var files []string
	for _, s := range sources {
		l.addFile(s.Name, s.Data)
		files = append(files, s.Name)
	}
	l.resolve()
	l.problems.sort()
	if len(l.problems.Errors()) > 0 {
		return nil, l.problems, nil
	}
	if err := openslosdk.Validate(l.objects...); err != nil {
		return nil, l.problems, fmt.Errorf("exported objects do not validate: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString("# Plain OpenSLO v1 exported by inferslo from " + input.SourceList(files) + ".\n")
	if err := openslosdk.Encode(&buf, openslosdk.FormatYAML, l.objects...); err != nil {
		return nil, l.problems, fmt.Errorf("encode OpenSLO: %w", err)
	}
	return buf.Bytes(), l.problems, nil
}
