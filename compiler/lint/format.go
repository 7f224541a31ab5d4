package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/inferslo/inferslo/compiler/safetext"
)

// Formats are the output formats of Write.
var Formats = []string{"text", "json", "github", "sarif"}

// Write prints findings in a format: text (with the line and a caret),
// json, github (workflow annotations) or sarif (code scanning).
func Write(w io.Writer, format string, res Result) error {
	res = redacted(res)
	switch format {
	case "", "text":
		return writeText(w, res)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		out := res.Findings
		if out == nil {
			out = []Finding{}
		}
		return enc.Encode(out)
	case "github":
		return writeGitHub(w, res)
	case "sarif":
		return writeSARIF(w, res)
	}
	return fmt.Errorf("unknown format %q; valid: %s", format, strings.Join(Formats, ", "))
}

func writeText(w io.Writer, res Result) error {
	for _, f := range res.Findings {
		loc := f.File
		if f.Line > 0 {
			loc += fmt.Sprintf(":%d", f.Line)
			if f.Column > 0 {
				loc += fmt.Sprintf(":%d", f.Column)
			}
		}
		fmt.Fprintf(w, "%s: %s: %s (%s)\n", loc, f.Severity, f.Message, f.Check)
		if f.Source != "" && f.Line > 0 {
			num := fmt.Sprint(f.Line)
			src, col := safetext.Window(f.Source, max(f.Column, 1))
			// Tabs keep their width so the caret lines up.
			pad := []byte(src[:min(col-1, len(src))])
			for i, c := range pad {
				if c != '\t' {
					pad[i] = ' '
				}
			}
			fmt.Fprintf(w, "  %s | %s\n  %s | %s^\n", num, src, strings.Repeat(" ", len(num)), pad)
		}
	}
	counts := map[Severity]int{}
	for _, f := range res.Findings {
		counts[f.Severity]++
	}
	_, err := fmt.Fprintf(w, "%d files linted: %d errors, %d warnings, %d info\n", res.Files, counts[Error], counts[Warning], counts[Info])
	return err
}

func writeGitHub(w io.Writer, res Result) error {
	esc := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	prop := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	for _, f := range res.Findings {
		level := map[Severity]string{Error: "error", Warning: "warning", Info: "notice"}[f.Severity]
		fmt.Fprintf(w, "::%s file=%s", level, prop.Replace(f.File))
		if f.Line > 0 {
			fmt.Fprintf(w, ",line=%d", f.Line)
			if f.Column > 0 {
				fmt.Fprintf(w, ",col=%d", f.Column)
			}
		}
		if _, err := fmt.Fprintf(w, ",title=%s::%s\n", prop.Replace(f.Check), esc.Replace(f.Message)); err != nil {
			return err
		}
	}
	return nil
}

// writeSARIF writes SARIF 2.1.0 with one rule per check.
func writeSARIF(w io.Writer, res Result) error {
	type msg struct {
		Text string `json:"text"`
	}
	type region struct {
		StartLine   int `json:"startLine,omitempty"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	type physical struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region *region `json:"region,omitempty"`
	}
	type location struct {
		PhysicalLocation physical `json:"physicalLocation"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   msg        `json:"message"`
		Locations []location `json:"locations"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription msg    `json:"shortDescription"`
		HelpURI          string `json:"helpUri"`
		Default          struct {
			Level string `json:"level"`
		} `json:"defaultConfiguration"`
	}
	level := func(s Severity) string {
		return map[Severity]string{Error: "error", Warning: "warning", Info: "note"}[s]
	}
	var rules []rule
	for _, c := range Checks() {
		r := rule{ID: c.ID, ShortDescription: msg{c.Summary}, HelpURI: "https://github.com/inferslo/inferslo/blob/main/docs/lint.md#" + anchor(c.ID)}
		r.Default.Level = level(c.Severity)
		rules = append(rules, r)
	}
	results := []result{}
	for _, f := range res.Findings {
		var l location
		l.PhysicalLocation.ArtifactLocation.URI = f.File
		if f.Line > 0 {
			l.PhysicalLocation.Region = &region{StartLine: f.Line, StartColumn: f.Column}
		}
		results = append(results, result{RuleID: f.Check, Level: level(f.Severity), Message: msg{f.Message}, Locations: []location{l}})
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "inferslo lint", "informationUri": "https://github.com/inferslo/inferslo", "rules": rules}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// anchor is the docs heading anchor of a check id.
func anchor(id string) string {
	return strings.NewReplacer("/", "", ".", "").Replace(id)
}

// redacted returns the result with credentials in URLs hidden in every
// field a format prints.
func redacted(res Result) Result {
	out := res
	out.Findings = make([]Finding, len(res.Findings))
	for i, f := range res.Findings {
		f.File, f.Message, f.Source = safetext.Redact(f.File), safetext.Redact(f.Message), safetext.Redact(f.Source)
		out.Findings[i] = f
	}
	return out
}
