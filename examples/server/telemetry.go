package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The server's telemetry is set by the standard OpenTelemetry variables,
// not PARLEY_* ones (so warnUnknownVariables never flags them):
//
//	OTEL_TRACES_EXPORTER   console (spans printed to stdout), otlp, or none
//	OTEL_METRICS_EXPORTER  console, otlp, or none
//	OTEL_EXPORTER_OTLP_ENDPOINT  where otlp sends, over HTTP (default http://localhost:4318)
//
// Unset, an exporter is otlp when OTEL_EXPORTER_OTLP_ENDPOINT is set, and
// none otherwise: a server started with no OTEL_* variables exports
// nothing. The SDK and the exporters read the rest of the standard
// variables themselves (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_METRIC_EXPORT_INTERVAL, ...). The
// providers are installed as the otel globals, which the Engine uses when
// its Config names none.

// defaultServiceName is service.name unless OTEL_SERVICE_NAME says otherwise.
const defaultServiceName = "parley-example"

// startTelemetry installs the trace and metric providers getenv asks for,
// with console output going to stdout. It returns the function that
// flushes and stops them (a no-op when nothing was installed).
func startTelemetry(ctx context.Context, getenv func(string) string, stdout io.Writer) (func(context.Context) error, error) {
	traces, err := exporterKind(getenv, "OTEL_TRACES_EXPORTER")
	if err != nil {
		return nil, err
	}
	metrics, err := exporterKind(getenv, "OTEL_METRICS_EXPORTER")
	if err != nil {
		return nil, err
	}
	if traces == "none" && metrics == "none" {
		return func(context.Context) error { return nil }, nil
	}
	// WithFromEnv reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
	// and wins over the default name.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(defaultServiceName)), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	var stops []func(context.Context) error
	stop := func(ctx context.Context) error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s(ctx))
		}
		return errors.Join(errs...)
	}
	if traces != "none" {
		exp, err := spanExporter(ctx, traces, stdout)
		if err != nil {
			return nil, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		otel.SetTracerProvider(tp)
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
		stops = append(stops, tp.Shutdown)
	}
	if metrics != "none" {
		exp, err := metricExporter(ctx, metrics, stdout)
		if err != nil {
			_ = stop(ctx)
			return nil, err
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		otel.SetMeterProvider(mp)
		stops = append(stops, mp.Shutdown)
	}
	return stop, nil
}

// exporterKind is the exporter variable name asks for: console, otlp or
// none (see startTelemetry for the default).
func exporterKind(getenv func(string) string, name string) (string, error) {
	switch v := getenv(name); v {
	case "console", "otlp", "none":
		return v, nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
			return "otlp", nil
		}
		return "none", nil
	default:
		return "", fmt.Errorf("%s=%q: want console, otlp or none", name, v)
	}
}

func spanExporter(ctx context.Context, kind string, stdout io.Writer) (sdktrace.SpanExporter, error) {
	if kind == "console" {
		return stdouttrace.New(stdouttrace.WithWriter(stdout))
	}
	return otlptracehttp.New(ctx) // OTEL_EXPORTER_OTLP_* configure it
}

func metricExporter(ctx context.Context, kind string, stdout io.Writer) (sdkmetric.Exporter, error) {
	if kind == "console" {
		return stdoutmetric.New(stdoutmetric.WithWriter(stdout))
	}
	return otlpmetrichttp.New(ctx) // OTEL_EXPORTER_OTLP_* configure it
}

// telemetryStopTimeout bounds the final flush at shutdown.
const telemetryStopTimeout = 5 * time.Second
