package input

import (
	"strconv"
	"strings"
	"unicode"
)

// SourceList joins spec names for a one-line comment, quoting any name that
// holds a space, a quote, a comma or a character that is not printable.
func SourceList(sources []string) string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s
		if strings.IndexFunc(s, needsQuote) >= 0 || s == "" {
			names[i] = strconv.Quote(s)
		}
	}
	return strings.Join(names, ", ")
}

func needsQuote(r rune) bool {
	return !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune(`"\,#`, r)
}
