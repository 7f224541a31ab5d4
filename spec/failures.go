package spec

import (
	"fmt"
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// shorthandSLIs lists every sli a shorthand objective may name: the latency
// roles, errors and the failure kinds.
func shorthandSLIs() []string {
	out := append([]string{}, engine.Roles...)
	out = append(out, "errors")
	out = append(out, engine.FailureKinds...)
	return append(out, model.SLIGoodput)
}

// failureGood says what a good event of a failure-kind SLI is.
var failureGood = map[string]string{
	"incomplete": "finish whole (not cut short by a token budget or an abort)",
	"rejections": "are admitted (not refused at admission)",
	"streams":    "complete their stream",
}

// failureDescription describes a failure-kind SLO, with the catalog's note.
func failureDescription(eng *engine.Engine, kind string) string {
	desc := fmt.Sprintf("Share of %s requests that %s.", eng.Title, failureGood[kind])
	if f := eng.Failures[kind]; f != nil && f.Note != "" {
		desc += " " + f.Note
	}
	return strings.TrimSpace(desc)
}
