// Package httpconfig makes the HTTP clients of the requests inferslo sends
// to Prometheus-compatible servers (backtest's query_range, --metrics
// scrapes) from Prometheus' own client configuration: bearer tokens and
// their files, basic auth, TLS and CAs, OAuth2, proxies and fixed headers
// such as Mimir's X-Scope-OrgID, as a scrape config or remote_read writes
// them.
package httpconfig

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"time"

	"github.com/prometheus/common/config"

	"github.com/inferslo/inferslo/compiler/safetext"
	"github.com/inferslo/inferslo/spec/input"
)

// maxFile bounds the configuration file: it holds a few settings.
const maxFile = 1 << 20

// Client returns the client for requests to a server: the configuration
// file's when a name is given, else a plain one. Either refuses a redirect
// to another host (credentials must not follow it), and gives up after
// timeout when it is above zero.
func Client(file string, timeout time.Duration) (*http.Client, error) {
	c := &http.Client{}
	if file != "" {
		data, err := input.ReadRegular(file, maxFile)
		if err != nil {
			return nil, fmt.Errorf("http config: %w", err)
		}
		cfg, err := config.LoadHTTPConfig(string(data))
		if err != nil {
			return nil, fmt.Errorf("http config %s: %s", file, hideValues(err.Error()))
		}
		cfg.SetDirectory(filepath.Dir(file))
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("http config %s: %s", file, hideValues(err.Error()))
		}
		if c, err = config.NewClientFromConfig(*cfg, "inferslo"); err != nil {
			return nil, fmt.Errorf("http config %s: %s", file, hideValues(err.Error()))
		}
	}
	c.Timeout = timeout
	c.CheckRedirect = safetext.SameHostRedirects
	return c, nil
}

// quotedValue is what a YAML error quotes of the file (`hunter2`): the
// value may be the token itself.
var quotedValue = regexp.MustCompile("`[^`]*`")

// hideValues keeps an error's place and reason, not the values it quotes.
func hideValues(msg string) string {
	return safetext.HideQuoted(quotedValue.ReplaceAllString(msg, "`…`"))
}
