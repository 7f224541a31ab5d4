package grafana

// indent appends src, compact JSON that encoding/json wrote, indented by
// two spaces as json.Indent indents it. json.Indent re-scans and validates
// every byte, which cost more than encoding the dashboard; this pass trusts
// its input and only tracks strings and nesting.
func indent(dst, src []byte) []byte {
	depth := 0
	inString, escaped := false, false
	// pending: an opening bracket's line break, written once the next
	// byte shows the container is not empty ({} and [] stay on one line).
	pending := false
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for _, c := range src {
		if inString {
			dst = append(dst, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if pending && c != '}' && c != ']' {
			pending = false
			newline()
		}
		switch c {
		case '{', '[':
			dst = append(dst, c)
			depth++
			pending = true
		case '}', ']':
			depth--
			if pending {
				pending = false
			} else {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		case '"':
			dst = append(dst, c)
			inString = true
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
