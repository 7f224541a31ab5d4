package simulate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// ReadRuleFiles reads every *.rules.yaml below dir (an `inferslo compile`
// output folder, or its prometheus/ subfolder), for RunFiles. Paths are
// relative to dir, with forward slashes, in lexical order.
func ReadRuleFiles(dir string) (artifact.Set, error) {
	var files artifact.Set
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".rules.yaml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, artifact.File{Path: filepath.ToSlash(rel), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read rule files: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.rules.yaml files below %s", dir)
	}
	files.Sort()
	return files, nil
}
