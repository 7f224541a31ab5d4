package keda

import (
	"testing"

	"github.com/kedacore/keda/v2/pkg/scalers"
)

func TestBuild(t *testing.T) { _ = scalers.NewPrometheusScaler }
