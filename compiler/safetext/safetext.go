// Package safetext makes outside text fit to print: URLs without their
// credentials, and text from servers, scrapes and label values quoted so
// a terminal shows it as text (no escape sequences, no forged lines) and
// cut to a bounded length. Every message that carries a URL, a server's
// words or a label value goes through it. It imports nothing of inferslo.
package safetext

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQuoted bounds what Quote keeps of a text, in bytes.
const MaxQuoted = 200

// hidden stands for a secret in a printed URL.
const hidden = "xxxxx"

// URL is a URL fit to print: its user information (a user name alone may
// be a token: https://TOKEN@host) and the values of its query parameters
// (tokens are often passed there) hidden, its fragment dropped. Text that
// does not parse as a URL is not echoed.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL given"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), hidden)
		} else {
			u.User = url.User(hidden)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{hidden}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Redact hides credentials in every URL a free text holds: user
// information, and query parameters named like secrets.
func Redact(s string) string {
	if !strings.Contains(s, "://") && !strings.ContainsAny(s, "?&") {
		return s
	}
	userinfo := regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s"']+@`)
	secret := regexp.MustCompile(`(?i)([?&](?:[a-z_-]*(?:token|key|secret|password|passwd|pwd|auth|signature|sig|credential)[a-z_-]*)=)[^&\s"']+`)
	s = userinfo.ReplaceAllString(s, "${1}"+hidden+"@")
	return secret.ReplaceAllString(s, "${1}"+hidden)
}

// Quote is outside text as a Go-quoted string: control characters,
// terminal escapes and bytes that are not UTF-8 written as escapes, so the
// text can neither drive a terminal nor start a line of its own, and cut
// to MaxQuoted bytes with the full length said.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// SameHostRedirects is an http.Client's CheckRedirect that follows a
// redirect only to the same scheme and host, at most five times: a server
// may move a path, not send the request (and what it carries) elsewhere.
func SameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("stopped after %d redirects", len(via))
	}
	if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refused a redirect to another host, %s", URL(req.URL.Scheme+"://"+req.URL.Host))
	}
	return nil
}

// HideQuoted replaces what a parser's error quotes from its input ('…' or
// "…") with an ellipsis: a file that failed to parse may be a secret that
// only its name made look like a spec or a scrape. A quoted single
// character (the one a parser expected) stays.
func HideQuoted(msg string) string {
	for _, q := range []string{"'", `"`} {
		parts := strings.Split(msg, q)
		for i := 1; i < len(parts)-1; i += 2 {
			if utf8.RuneCountInString(parts[i]) > 1 {
				parts[i] = "…"
			}
		}
		msg = strings.Join(parts, q)
	}
	return msg
}

// Printable is a message of outside words without quotes around it: each
// control character and byte that is not UTF-8 shown as "?", cut to
// MaxQuoted bytes. For messages that are mostly a parser's own words.
func Printable(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return '?'
		}
		return r
	}, s)
	if len(s) > MaxQuoted {
		cut := MaxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// windowWidth bounds the source shown around a problem's column: a
// minified dashboard or JSON spec is one line of hundreds of kilobytes.
const windowWidth = 60

// Window cuts a source line to windowWidth bytes either side of a 1-based
// column, marking the cuts, and returns the caret's column in the cut.
func Window(line string, col int) (string, int) {
	col = min(col, len(line)+1)
	from, to := max(col-1-windowWidth, 0), min(col-1+windowWidth, len(line))
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to++
	}
	out := line[from:to]
	col -= from
	if from > 0 {
		out = "…" + out
		col += len("…")
	}
	if to < len(line) {
		out += "…"
	}
	return out, col
}
