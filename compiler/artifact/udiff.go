package artifact

import (
	"fmt"

	udiff "github.com/aymanbagabas/go-udiff"
)

// unified is a unified diff of have (named oldName) and want (newName) with
// three lines of context, as `diff -u` prints it: the edits come from Myers'
// shortest-edit-script algorithm over lines, so a one-line change of a spec
// shows as the lines it changed, not as every line between two anchors.
// Empty when the two are equal.
func unified(oldName string, have []byte, newName string, want []byte) ([]byte, error) {
	old, new := string(have), string(want)
	if old == new {
		return nil, nil
	}
	out, err := udiff.ToUnified(oldName, newName, old, udiff.Lines(old, new), udiff.DefaultContextLines)
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", newName, err)
	}
	return []byte(out), nil
}
