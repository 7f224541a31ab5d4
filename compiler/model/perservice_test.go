package model

import (
	"slices"
	"testing"
)

func TestPerService(t *testing.T) {
	slo := func(service, name string) SLO { return SLO{Name: name, Service: Service{Name: service}} }
	names := func(slos []SLO) []string {
		var out []string
		for _, s := range slos {
			out = append(out, s.Service.Name+"/"+s.Name)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		set  []SLO
		want [][]string
	}{
		{"a sorted set's services are its runs of SLOs",
			[]SLO{slo("a", "1"), slo("a", "2"), slo("b", "1")},
			[][]string{{"a/1", "a/2"}, {"b/1"}}},
		{"a service whose SLOs are apart gets them in set order",
			[]SLO{slo("b", "1"), slo("a", "1"), slo("b", "2"), slo("a", "2"), slo("b", "3")},
			[][]string{{"a/1", "a/2"}, {"b/1", "b/2", "b/3"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := names(tt.set)
			services := Set{SLOs: tt.set}.PerService()
			var got [][]string
			for _, s := range services {
				got = append(got, names(s.SLOs))
				// An append to a service's SLOs must not reach the set.
				_ = append(s.SLOs, slo("z", "z"))
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("PerService() = %v, want %v", got, tt.want)
			}
			if after := names(tt.set); !slices.Equal(after, before) {
				t.Errorf("the set changed from %v to %v", before, after)
			}
		})
	}
}
