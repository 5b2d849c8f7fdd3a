package otlp

import (
	"testing"
)

// FuzzDecode feeds the OTLP decoders (traces, logs and metrics, JSON and protobuf)
// arbitrary bytes: they never panic and never return a nil span or record,
// and the events they read map to sessions without panicking.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"invoke_agent","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]}]}]}]}`))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"W47/95gDgQPSabYzgT/GDA==","spanId":"7uGbfsPBsXQ=","startTimeUnixNano":"1700000000000000000"}]}]}]}`))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Add([]byte(`{"resourceSpans":"nope"}`))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","body":{"stringValue":"claude_code.tool_result"},"attributes":[{"key":"session.id","value":{"stringValue":"s"}},{"key":"tool_use_id","value":{"stringValue":"toolu_1"}},{"key":"success","value":{"stringValue":"false"}}]}]}]}]}`))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"codex.sse_event"}},{"key":"conversation.id","value":{"stringValue":"c"}},{"key":"event.kind","value":{"stringValue":"response.completed"}},{"key":"input_token_count","value":{"intValue":"9"}}]}]}]}]}`))
	f.Add([]byte(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"claude_code.session.count","sum":{"dataPoints":[{"attributes":[{"key":"session.id","value":{"stringValue":"s"}}],"asDouble":1}]}}]}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte) ([]*span, error){decodeJSON, decodeProtobuf} {
			spans, err := decode(body)
			if err != nil {
				continue
			}
			for _, s := range spans {
				if s == nil {
					t.Fatal("a nil span")
				}
			}
		}
		for _, decode := range []func([]byte) ([]*logRecord, error){decodeLogsJSON, decodeLogsProtobuf} {
			records, err := decode(body)
			if err != nil {
				continue
			}
			for _, r := range records {
				if r == nil {
					t.Fatal("a nil record")
				}
			}
			planLogs(records)
		}
		for _, decode := range []func([]byte) ([]*metricPoint, error){decodeMetricsJSON, decodeMetricsProtobuf} {
			points, err := decode(body)
			if err != nil {
				continue
			}
			for _, p := range points {
				if p == nil {
					t.Fatal("a nil data point")
				}
			}
		}
	})
}
