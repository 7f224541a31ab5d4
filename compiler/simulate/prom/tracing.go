package prom

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
)

// DisableTracing sets OpenTelemetry's global tracer provider to the no-op
// one. Prometheus' engine and rules manager start a span for every query
// through the global provider, whose default delegate still builds each
// span (6% of a replay's CPU); inferslo exports no traces. It changes
// process state, so only main and TestMain call it, once, first.
func DisableTracing() { otel.SetTracerProvider(noop.NewTracerProvider()) }
