package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// span is one span of an export, in the form the mapping reads whatever
// the encoding: ids as lower-case hex, attributes as plain Go values
// (string, int64, float64, bool, []byte, []any, attrMap).
type span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Start, End                time.Time
	Attrs                     attrMap
	Failed                    bool   // status code ERROR
	StatusMessage             string // the status's message
	Resource                  attrMap
}

// attrMap is a set of attributes as plain Go values.
type attrMap map[string]any

// str returns a string attribute ("" when absent or not a string; numbers
// are written out, for ids sent as numbers).
func (a attrMap) str(key string) string {
	switch v := a[key].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// decimal returns a number attribute (a double, an integer or a string
// holding either), and whether there is one.
func (a attrMap) decimal(key string) (float64, bool) {
	switch v := a[key].(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	return 0, false
}

// num returns an integer attribute, 0 when absent.
func (a attrMap) num(key string) int64 {
	switch v := a[key].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(v, 64)
			return int64(f)
		}
		return n
	}
	return 0
}

func (s *span) str(key string) string { return s.Attrs.str(key) }
func (s *span) num(key string) int64  { return s.Attrs.num(key) }

// decodeProtobuf reads an ExportTraceServiceRequest in protobuf. Its wire
// form is that of TracesData (field 1: repeated ResourceSpans), which
// needs no gRPC code to decode.
func decodeProtobuf(body []byte) ([]*span, error) {
	var req tracepb.TracesData
	if err := proto.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP protobuf ExportTraceServiceRequest: %w", err)
	}
	var spans []*span
	for _, rs := range req.GetResourceSpans() {
		resource := protoAttrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				traceID, err := binaryID(sp.GetTraceId(), 16, "trace_id")
				if err != nil {
					return nil, err
				}
				spanID, err := binaryID(sp.GetSpanId(), 8, "span_id")
				if err != nil {
					return nil, err
				}
				parentID, err := binaryID(sp.GetParentSpanId(), 8, "parent_span_id")
				if err != nil {
					return nil, err
				}
				spans = append(spans, &span{
					TraceID: traceID, SpanID: spanID, ParentID: parentID, Name: sp.GetName(),
					Start: unixNano(sp.GetStartTimeUnixNano()), End: unixNano(sp.GetEndTimeUnixNano()),
					Attrs:  protoAttrs(sp.GetAttributes()),
					Failed: sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, StatusMessage: sp.GetStatus().GetMessage(),
					Resource: resource,
				})
			}
		}
	}
	return spans, nil
}

// binaryID is a protobuf id as hex, checking its length (empty is allowed:
// a root span has no parent).
func binaryID(id []byte, size int, field string) (string, error) {
	if len(id) != 0 && len(id) != size {
		return "", fmt.Errorf("%s has %d bytes; OTLP ids have %d", field, len(id), size)
	}
	return hex.EncodeToString(id), nil
}

func protoAttrs(kvs []*commonpb.KeyValue) attrMap {
	attrs := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		attrs[kv.GetKey()] = protoValue(kv.GetValue())
	}
	return attrs
}

func protoValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		list := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, item := range x.ArrayValue.GetValues() {
			list = append(list, protoValue(item))
		}
		return list
	case *commonpb.AnyValue_KvlistValue:
		return protoAttrs(x.KvlistValue.GetValues())
	}
	return nil
}

func unixNano(n uint64) time.Time {
	if n == 0 || n > 1<<63-1 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// OTLP/JSON: the protobuf messages with lowerCamelCase keys, 64-bit
// integers as numbers or strings, enums as numbers (or their names), and
// trace and span ids in hex (base64, protobuf's JSON form for bytes, is
// accepted too).
type (
	jsonRequest struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource struct {
			Attributes []jsonKeyValue `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	}
	jsonScopeSpans struct {
		Spans []jsonSpan `json:"spans"`
	}
	jsonSpan struct {
		TraceID           string         `json:"traceId"`
		SpanID            string         `json:"spanId"`
		ParentSpanID      string         `json:"parentSpanId"`
		Name              string         `json:"name"`
		StartTimeUnixNano jsonUint       `json:"startTimeUnixNano"`
		EndTimeUnixNano   jsonUint       `json:"endTimeUnixNano"`
		Attributes        []jsonKeyValue `json:"attributes"`
		Status            struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"status"`
	}
	jsonKeyValue struct {
		Key   string       `json:"key"`
		Value jsonAnyValue `json:"value"`
	}
	jsonAnyValue struct {
		StringValue *string  `json:"stringValue"`
		BoolValue   *bool    `json:"boolValue"`
		IntValue    *jsonInt `json:"intValue"`
		DoubleValue *float64 `json:"doubleValue"`
		BytesValue  *[]byte  `json:"bytesValue"`
		ArrayValue  *struct {
			Values []jsonAnyValue `json:"values"`
		} `json:"arrayValue"`
		KvlistValue *struct {
			Values []jsonKeyValue `json:"values"`
		} `json:"kvlistValue"`
	}
)

// jsonInt is a 64-bit integer sent as a JSON number or a decimal string.
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*n = jsonInt(v)
	return err
}

// jsonUint is an unsigned 64-bit integer (times in nanoseconds), as a JSON
// number or a decimal string.
type jsonUint uint64

func (n *jsonUint) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseUint(strings.Trim(string(b), `"`), 10, 64)
	*n = jsonUint(v)
	return err
}

// decodeJSON reads an ExportTraceServiceRequest in OTLP/JSON.
func decodeJSON(body []byte) ([]*span, error) {
	var req jsonRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("the body is not an OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	var spans []*span
	for _, rs := range req.ResourceSpans {
		resource := jsonAttrs(rs.Resource.Attributes)
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				traceID, err := textID(sp.TraceID, 16, "traceId")
				if err != nil {
					return nil, err
				}
				spanID, err := textID(sp.SpanID, 8, "spanId")
				if err != nil {
					return nil, err
				}
				parentID, err := textID(sp.ParentSpanID, 8, "parentSpanId")
				if err != nil {
					return nil, err
				}
				spans = append(spans, &span{
					TraceID: traceID, SpanID: spanID, ParentID: parentID, Name: sp.Name,
					Start: unixNano(uint64(sp.StartTimeUnixNano)), End: unixNano(uint64(sp.EndTimeUnixNano)),
					Attrs:  jsonAttrs(sp.Attributes),
					Failed: isErrorCode(sp.Status.Code), StatusMessage: sp.Status.Message,
					Resource: resource,
				})
			}
		}
	}
	return spans, nil
}

// textID reads an id written in hex (as OTLP/JSON says) or base64 (as
// protobuf's JSON mapping writes bytes), and returns it in hex.
func textID(s string, size int, field string) (string, error) {
	if s == "" {
		return "", nil
	}
	if len(s) == 2*size {
		if b, err := hex.DecodeString(s); err == nil {
			return hex.EncodeToString(b), nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == size {
			return hex.EncodeToString(b), nil
		}
	}
	return "", fmt.Errorf("%s %q is neither %d hex digits nor the base64 of %d bytes", field, s, 2*size, size)
}

// isErrorCode reads a status code: 2 or "STATUS_CODE_ERROR".
func isErrorCode(raw json.RawMessage) bool {
	s := strings.Trim(string(raw), `"`)
	return s == "2" || s == "STATUS_CODE_ERROR"
}

func jsonAttrs(kvs []jsonKeyValue) attrMap {
	attrs := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		attrs[kv.Key] = kv.Value.value()
	}
	return attrs
}

func (v jsonAnyValue) value() any {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.IntValue != nil:
		return int64(*v.IntValue)
	case v.DoubleValue != nil:
		return *v.DoubleValue
	case v.BytesValue != nil:
		return *v.BytesValue
	case v.ArrayValue != nil:
		list := make([]any, 0, len(v.ArrayValue.Values))
		for _, item := range v.ArrayValue.Values {
			list = append(list, item.value())
		}
		return list
	case v.KvlistValue != nil:
		return jsonAttrs(v.KvlistValue.Values)
	}
	return nil
}
