package query

import (
	"fmt"
	"strings"
)

// Percentile is quantile q of a histogram's observations over window
// (a duration or a Grafana variable), one per group of the labels given; a
// native histogram is one series without le, so its rates are summed whole.
func Percentile(q, histogram, selector string, native bool, groupBy []string, window string) string {
	by := strings.Join(groupBy, ", ")
	if native {
		agg := "sum"
		if by != "" {
			agg = "sum by (" + by + ") "
		}
		return fmt.Sprintf("histogram_quantile(%s, %s(rate(%s[%s])))", q, agg, SeriesSelector(histogram, selector), window)
	}
	if by != "" {
		by = ", " + by
	}
	return fmt.Sprintf("histogram_quantile(%s, sum by (le%s) (rate(%s[%s])))", q, by, SeriesSelector(histogram+"_bucket", selector), window)
}
