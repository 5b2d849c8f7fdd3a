package otlp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// logRecord is one log record of an export (an event, for the harnesses
// read here), in the form the mapping reads whatever the encoding.
type logRecord struct {
	EventName string // the record's event_name, when the exporter sets it
	Body      any    // the body as a plain value (string for events)
	At        time.Time
	Attrs     attrMap
	Resource  attrMap
}

// decodeLogsProtobuf reads an ExportLogsServiceRequest in protobuf. Its
// wire form is that of LogsData (field 1: repeated ResourceLogs).
func decodeLogsProtobuf(body []byte) ([]*logRecord, error) {
	var req logspb.LogsData
	if err := proto.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP protobuf ExportLogsServiceRequest: %w", err)
	}
	var records []*logRecord
	for _, rl := range req.GetResourceLogs() {
		resource := protoAttrs(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				at := unixNano(lr.GetTimeUnixNano())
				if at.IsZero() {
					at = unixNano(lr.GetObservedTimeUnixNano())
				}
				var body any
				if lr.GetBody() != nil {
					body = protoValue(lr.GetBody())
				}
				records = append(records, &logRecord{EventName: lr.GetEventName(), Body: body, At: at,
					Attrs: protoAttrs(lr.GetAttributes()), Resource: resource})
			}
		}
	}
	return records, nil
}

// OTLP/JSON logs: ExportLogsServiceRequest with lowerCamelCase keys.
type (
	jsonLogsRequest struct {
		ResourceLogs []struct {
			Resource struct {
				Attributes []jsonKeyValue `json:"attributes"`
			} `json:"resource"`
			ScopeLogs []struct {
				LogRecords []jsonLogRecord `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	jsonLogRecord struct {
		TimeUnixNano         jsonUint       `json:"timeUnixNano"`
		ObservedTimeUnixNano jsonUint       `json:"observedTimeUnixNano"`
		EventName            string         `json:"eventName"`
		Body                 *jsonAnyValue  `json:"body"`
		Attributes           []jsonKeyValue `json:"attributes"`
	}
)

// decodeLogsJSON reads an ExportLogsServiceRequest in OTLP/JSON.
func decodeLogsJSON(body []byte) ([]*logRecord, error) {
	var req jsonLogsRequest
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP/JSON ExportLogsServiceRequest: %w", err)
	}
	var records []*logRecord
	for _, rl := range req.ResourceLogs {
		resource := jsonAttrs(rl.Resource.Attributes)
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				at := unixNano(uint64(lr.TimeUnixNano))
				if at.IsZero() {
					at = unixNano(uint64(lr.ObservedTimeUnixNano))
				}
				var body any
				if lr.Body != nil {
					body = lr.Body.value()
				}
				records = append(records, &logRecord{EventName: lr.EventName, Body: body, At: at,
					Attrs: jsonAttrs(lr.Attributes), Resource: resource})
			}
		}
	}
	return records, nil
}
