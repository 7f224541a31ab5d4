package render

import (
	"strings"
)

// markdown renders the small markdown subset the generated text panels use:
// paragraphs, pipe tables and `code`. Everything else is escaped text.
func markdown(src string) string {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "|"):
			flush()
			var rows [][]string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, cells(strings.TrimSpace(lines[i])))
			}
			i--
			b.WriteString(table(rows))
		default:
			para = append(para, l)
		}
	}
	flush()
	return b.String()
}

// cells splits a table line on pipes that are not escaped.
func cells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

func isSeparator(row []string) bool {
	for _, c := range row {
		if strings.Trim(c, ":-") != "" || c == "" {
			return false
		}
	}
	return true
}

func table(rows [][]string) string {
	var b strings.Builder
	b.WriteString("<table>\n")
	for i, r := range rows {
		if i == 1 && isSeparator(r) {
			continue
		}
		tag := "td"
		if i == 0 && len(rows) > 1 && isSeparator(rows[1]) {
			tag = "th"
		}
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<" + tag + ">" + inline(c) + "</" + tag + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	return b.String()
}

// inline escapes text and turns `code` spans into <code>.
func inline(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		// An odd count of backticks leaves the last one literal.
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + esc(p) + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(esc(p))
	}
	return b.String()
}
