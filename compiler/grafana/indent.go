package grafana

import "bytes"

// indent appends src, compact JSON that encoding/json wrote, indented by
// two spaces as json.Indent indents it. json.Indent re-scans and validates
// every byte, which cost more than encoding the dashboard; this pass trusts
// its input and only tracks strings and nesting, copying each string and
// each run of other bytes whole.
func indent(dst, src []byte) []byte {
	// breaks holds a line break and the indentation of every depth so far.
	breaks := []byte("\n")
	depth := 0
	newline := func() {
		for len(breaks) < 1+2*depth {
			breaks = append(breaks, "  "...)
		}
		dst = append(dst, breaks[:1+2*depth]...)
	}
	// pending: an opening bracket's line break, written once the next
	// byte shows the container is not empty ({} and [] stay on one line).
	pending := false
	for i := 0; i < len(src); {
		c := src[i]
		if pending && c != '}' && c != ']' {
			pending = false
			newline()
		}
		switch c {
		case '{', '[':
			dst = append(dst, c)
			depth++
			pending = true
			i++
		case '}', ']':
			depth--
			if pending {
				pending = false
			} else {
				newline()
			}
			dst = append(dst, c)
			i++
		case ',':
			dst = append(dst, c)
			newline()
			i++
		case ':':
			dst = append(dst, c, ' ')
			i++
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end
		default:
			// A number or literal, up to the next byte of structure.
			end := i + 1
			for end < len(src) && !structural(src[end]) {
				end++
			}
			dst = append(dst, src[i:end]...)
			i = end
		}
	}
	return dst
}

// stringEnd is the index just past the string that opens at src[start]:
// its closing quote is the first one not escaped, that is not after an odd
// run of backslashes.
func stringEnd(src []byte, start int) int {
	for i := start + 1; i < len(src); {
		q := bytes.IndexByte(src[i:], '"')
		if q < 0 {
			return len(src)
		}
		q += i
		slashes := 0
		for j := q - 1; j > start && src[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(src)
}

// structural tells the bytes indent acts on outside strings.
func structural(c byte) bool {
	switch c {
	case '{', '[', '}', ']', ',', ':', '"':
		return true
	}
	return false
}
