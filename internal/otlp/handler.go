package otlp

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Body limits: what may arrive on the wire, and what it may inflate to.
const (
	MaxBodyBytes    = 16 << 20
	MaxDecodedBytes = 64 << 20
)

// Content types of OTLP/HTTP.
const (
	contentProtobuf = "application/x-protobuf"
	contentJSON     = "application/json"
)

// gRPC status codes used in error answers (google.rpc.Status.code).
const (
	codeInvalidArgument   = 3
	codeResourceExhausted = 8
	codeUnavailable       = 14
	codeUnauthenticated   = 16
)

// signal is what differs between the OTLP signals served: how an export
// is read and stored, and what its answer names.
type signal struct {
	path     string // for messages: "/v1/traces"
	rejected string // the partial success's count in JSON: "rejectedSpans"
	// export decodes a body (a decoding error is a badExport) and stores
	// what logbook reads of it.
	export func(ctx context.Context, l ledger.Ledger, body []byte, asJSON bool) (result, error)
}

// badExport is a body that is not an export of the signal.
type badExport struct{ error }

var traces = signal{path: "/v1/traces", rejected: "rejectedSpans",
	export: func(ctx context.Context, l ledger.Ledger, body []byte, asJSON bool) (result, error) {
		decode := decodeProtobuf
		if asJSON {
			decode = decodeJSON
		}
		spans, err := decode(body)
		if err != nil {
			return result{}, badExport{err}
		}
		return ingest(ctx, l, spans)
	}}

var logs = signal{path: "/v1/logs", rejected: "rejectedLogRecords",
	export: func(ctx context.Context, l ledger.Ledger, body []byte, asJSON bool) (result, error) {
		decode := decodeLogsProtobuf
		if asJSON {
			decode = decodeLogsJSON
		}
		records, err := decode(body)
		if err != nil {
			return result{}, badExport{err}
		}
		return ingestLogs(ctx, l, records)
	}}

var metrics = signal{path: "/v1/metrics", rejected: "rejectedDataPoints",
	export: func(ctx context.Context, l ledger.Ledger, body []byte, asJSON bool) (result, error) {
		decode := decodeMetricsProtobuf
		if asJSON {
			decode = decodeMetricsJSON
		}
		points, err := decode(body)
		if err != nil {
			return result{}, badExport{err}
		}
		return ingestMetrics(ctx, l, points)
	}}

// Handler serves POST /v1/traces: an OTLP/HTTP trace export in protobuf or
// JSON, gzip-compressed or not, authenticated by a logbook bearer token
// (Authorization: Bearer TOKEN) like the /v1 API. It answers an
// ExportTraceServiceResponse in the request's encoding, with
// partial_success when GenAI spans were rejected; a body it cannot read
// gets 400 and a google.rpc.Status, a token over its rate limit (shared
// with the API, see service.Admit) 429 with Retry-After, a database that
// fails 503 (the exporter retries; entry keys make the retry a no-op).
func Handler(svc *service.Service, log *slog.Logger) http.Handler {
	return &handler{svc: svc, log: log, signal: traces}
}

// LogsHandler serves POST /v1/logs as Handler serves traces: the events
// Claude Code and Codex CLI export as OTLP log records become entries of
// the sessions their hooks, the importer and traces write to (see the
// package doc). It answers an ExportLogsServiceResponse.
func LogsHandler(svc *service.Service, log *slog.Logger) http.Handler {
	return &handler{svc: svc, log: log, signal: logs}
}

// MetricsHandler serves POST /v1/metrics as Handler serves traces: the
// sessions Claude Code's metrics name are started (see ingestMetrics). It
// answers an ExportMetricsServiceResponse.
func MetricsHandler(svc *service.Service, log *slog.Logger) http.Handler {
	return &handler{svc: svc, log: log, signal: metrics}
}

type handler struct {
	svc    *service.Service
	log    *slog.Logger
	signal signal
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "send OTLP exports to "+h.signal.path+" with POST", http.StatusMethodNotAllowed)
		return
	}
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var asJSON bool
	switch media {
	case contentProtobuf, "application/protobuf":
	case contentJSON:
		asJSON = true
	default:
		http.Error(w, fmt.Sprintf("Content-Type %q is not OTLP/HTTP: send %s or %s", media, contentProtobuf, contentJSON),
			http.StatusUnsupportedMediaType)
		return
	}
	token, err := service.BearerToken(r.Header.Get("Authorization"))
	var caller service.Caller
	if err == nil {
		caller, err = h.svc.Admit(r.Context(), token)
	}
	var limited *logbook.LimitError
	if errors.As(err, &limited) {
		// OTLP/HTTP exporters retry a 429 after Retry-After.
		w.Header().Set("Retry-After", strconv.Itoa(logbook.Seconds(limited.RetryAfter)))
		writeStatus(w, asJSON, http.StatusTooManyRequests, codeResourceExhausted, limited.Error())
		return
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="logbook"`)
		writeStatus(w, asJSON, http.StatusUnauthorized, codeUnauthenticated,
			"send a logbook token: set OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20TOKEN")
		return
	}
	body, status, err := readBody(w, r)
	if err != nil {
		writeStatus(w, asJSON, status, codeInvalidArgument, err.Error())
		return
	}
	res, err := h.signal.export(r.Context(), h.svc.For(caller), body, asJSON)
	var bad badExport
	if errors.As(err, &bad) {
		writeStatus(w, asJSON, http.StatusBadRequest, codeInvalidArgument, bad.Error())
		return
	}
	if err != nil {
		h.log.ErrorContext(r.Context(), "OTLP export failed", "path", h.signal.path, "items", res.Items, "err", err)
		w.Header().Set("Retry-After", "5")
		writeStatus(w, asJSON, http.StatusServiceUnavailable, codeUnavailable, "the export could not be stored; send it again")
		return
	}
	if res.Rejected > 0 {
		h.log.WarnContext(r.Context(), "OTLP export partly rejected", "path", h.signal.path, "rejected", res.Rejected, "reason", res.Message)
	}
	writeResponse(w, asJSON, h.signal.rejected, res)
}

// readBody reads the request body, inflating gzip, within the limits. On
// error it returns the status to answer.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("the body is not gzip, as Content-Encoding says: %w", err)
		}
		defer zr.Close()
		body = zr
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Encoding %q is not supported: send gzip or none", enc)
	}
	data, err := io.ReadAll(io.LimitReader(body, MaxDecodedBytes+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is over %d bytes; export smaller batches", MaxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, errors.New("the body did not arrive in time; export smaller batches")
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("cannot read the body: %w", err)
	case len(data) > MaxDecodedBytes:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body inflates past %d bytes; export smaller batches", MaxDecodedBytes)
	}
	return data, http.StatusOK, nil
}

// writeResponse answers an Export…ServiceResponse; those of traces, logs
// and metrics have the same wire form:
//
//	message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
//	message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
//
// rejected names the count in JSON (rejectedSpans, rejectedLogRecords,
// rejectedDataPoints).
func writeResponse(w http.ResponseWriter, asJSON bool, rejected string, res result) {
	if asJSON {
		var body any = struct{}{}
		if res.Rejected > 0 || res.Message != "" {
			body = map[string]any{"partialSuccess": map[string]any{
				rejected: strconv.Itoa(res.Rejected), "errorMessage": res.Message}}
		}
		writeJSON(w, http.StatusOK, body)
		return
	}
	var out []byte
	if res.Rejected > 0 || res.Message != "" {
		var partial []byte
		if res.Rejected > 0 {
			partial = protowire.AppendTag(partial, 1, protowire.VarintType)
			partial = protowire.AppendVarint(partial, uint64(res.Rejected))
		}
		if res.Message != "" {
			partial = protowire.AppendTag(partial, 2, protowire.BytesType)
			partial = protowire.AppendString(partial, res.Message)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, partial)
	}
	w.Header().Set("Content-Type", contentProtobuf)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// writeStatus answers an error as a google.rpc.Status { int32 code = 1;
// string message = 2; } in the request's encoding.
func writeStatus(w http.ResponseWriter, asJSON bool, httpStatus, code int, message string) {
	message = logbook.Clip(message, 2000)
	if asJSON {
		writeJSON(w, httpStatus, map[string]any{"code": code, "message": message})
		return
	}
	var out []byte
	out = protowire.AppendTag(out, 1, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(code))
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendString(out, message)
	w.Header().Set("Content-Type", contentProtobuf)
	w.WriteHeader(httpStatus)
	_, _ = w.Write(out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contentJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
