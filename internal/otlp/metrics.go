package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// metricPoint is one data point of an export: the metric's name and the
// point's attributes (its value is not read; see ingestMetrics).
type metricPoint struct {
	Metric   string
	Attrs    attrMap
	Resource attrMap
}

// decodeMetricsProtobuf reads an ExportMetricsServiceRequest in protobuf.
// Its wire form is that of MetricsData (field 1: repeated ResourceMetrics).
func decodeMetricsProtobuf(body []byte) ([]*metricPoint, error) {
	var req metricspb.MetricsData
	if err := proto.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP protobuf ExportMetricsServiceRequest: %w", err)
	}
	var points []*metricPoint
	for _, rm := range req.GetResourceMetrics() {
		resource := protoAttrs(rm.GetResource().GetAttributes())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				var sets [][]*commonpb.KeyValue
				for _, p := range m.GetSum().GetDataPoints() {
					sets = append(sets, p.GetAttributes())
				}
				for _, p := range m.GetGauge().GetDataPoints() {
					sets = append(sets, p.GetAttributes())
				}
				for _, p := range m.GetHistogram().GetDataPoints() {
					sets = append(sets, p.GetAttributes())
				}
				for _, p := range m.GetExponentialHistogram().GetDataPoints() {
					sets = append(sets, p.GetAttributes())
				}
				for _, attrs := range sets {
					points = append(points, &metricPoint{Metric: m.GetName(), Attrs: protoAttrs(attrs), Resource: resource})
				}
			}
		}
	}
	return points, nil
}

// OTLP/JSON metrics: ExportMetricsServiceRequest with lowerCamelCase keys;
// of each data point only its attributes are read.
type (
	jsonMetricsRequest struct {
		ResourceMetrics []struct {
			Resource struct {
				Attributes []jsonKeyValue `json:"attributes"`
			} `json:"resource"`
			ScopeMetrics []struct {
				Metrics []jsonMetric `json:"metrics"`
			} `json:"scopeMetrics"`
		} `json:"resourceMetrics"`
	}
	jsonMetric struct {
		Name                 string      `json:"name"`
		Sum                  *jsonPoints `json:"sum"`
		Gauge                *jsonPoints `json:"gauge"`
		Histogram            *jsonPoints `json:"histogram"`
		ExponentialHistogram *jsonPoints `json:"exponentialHistogram"`
	}
	jsonPoints struct {
		DataPoints []struct {
			Attributes []jsonKeyValue `json:"attributes"`
		} `json:"dataPoints"`
	}
)

// decodeMetricsJSON reads an ExportMetricsServiceRequest in OTLP/JSON.
func decodeMetricsJSON(body []byte) ([]*metricPoint, error) {
	var req jsonMetricsRequest
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP/JSON ExportMetricsServiceRequest: %w", err)
	}
	var points []*metricPoint
	for _, rm := range req.ResourceMetrics {
		resource := jsonAttrs(rm.Resource.Attributes)
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				for _, set := range []*jsonPoints{m.Sum, m.Gauge, m.Histogram, m.ExponentialHistogram} {
					if set == nil {
						continue
					}
					for _, p := range set.DataPoints {
						points = append(points, &metricPoint{Metric: m.Name, Attrs: jsonAttrs(p.Attributes), Resource: resource})
					}
				}
			}
		}
	}
	return points, nil
}

// ingestMetrics starts, or finds, the session of every Claude Code data
// point that names one (session.id, which Claude Code adds unless
// OTEL_METRICS_INCLUDE_SESSION_ID=false), with its model, so a session
// whose harness exports metrics only is listed. The values are not
// recorded: the token counts and cost the metrics sum are those of the
// api_request events (POST /v1/logs), which record them per model call,
// and adding both would count them twice. Other data points are accepted
// and ignored.
func ingestMetrics(ctx context.Context, l ledger.Ledger, points []*metricPoint) (result, error) {
	type key struct{ project, hid string }
	sessions := make(map[key]*logSession)
	var order []key
	known := 0
	for _, p := range points {
		if !strings.HasPrefix(p.Metric, "claude_code.") {
			continue
		}
		hid := firstNonEmpty(p.Attrs.str("session.id"), p.Resource.str("session.id"))
		if hid == "" {
			continue
		}
		known++
		k := key{p.Resource.str(resourceProject), hid}
		s := sessions[k]
		if s == nil {
			s = &logSession{project: k.project, harness: harnessClaude, hid: hid}
			sessions[k] = s
			order = append(order, k)
		}
		s.records++
		if model := p.Attrs.str("model"); model != "" {
			s.model = model
		}
	}
	res := result{Items: len(points), Known: known}
	var reasons []string
	for _, k := range order {
		s := sessions[k]
		p := ledger.StartParams{Project: s.project, Harness: s.harness, HarnessSessionID: s.hid, KeepEnded: true}
		if s.model != "" {
			p.Fields.Model = &s.model
		}
		_, _, err := l.StartSession(ctx, p)
		switch {
		case err == nil:
			res.Sessions++
		case errors.Is(err, logbook.ErrEnded):
		case permanent(err):
			res.Rejected += s.records
			reasons = append(reasons, fmt.Sprintf("session %q: %v", s.hid, err))
		default:
			return res, err
		}
	}
	sort.Strings(reasons)
	res.Message = logbook.Clip(strings.Join(reasons, "; "), 2000)
	return res, nil
}
