package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

// openAPIDocument describes the routes as an OpenAPI 3.0 document, served
// at /openapi.json. It is built from the same table New serves, so a route
// cannot be served without being described. Request bodies and answers
// are described from their Go types (their JSON field names and kinds);
// every error is a problem document.
func openAPIDocument(routes []route, beside []Beside) []byte {
	problemRef := map[string]any{"$ref": "#/components/schemas/Problem"}
	paths := map[string]map[string]any{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		var params []any
		for _, segment := range strings.Split(path, "/") {
			if name, ok := strings.CutPrefix(segment, "{"); ok {
				params = append(params, map[string]any{"name": strings.TrimSuffix(name, "}"), "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			}
		}
		for _, name := range rt.query {
			params = append(params, queryParameter(name))
		}
		done := map[string]any{"description": "Done."}
		if rt.answer != nil {
			done["content"] = map[string]any{"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(rt.answer), 0, true)}}
		} else {
			done["description"] = "Done; the answer is not JSON (Server-Sent Events for /v1/events)."
		}
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": operationID(rt.pattern),
			"responses": map[string]any{
				"2XX": done,
				"4XX": map[string]any{"description": "A problem document whose detail says what to fix.", "content": map[string]any{"application/problem+json": map[string]any{"schema": problemRef}}},
				"5XX": map[string]any{"description": "A problem document; with 503, Retry-After says when to send the request again.", "content": map[string]any{"application/problem+json": map[string]any{"schema": problemRef}}},
			},
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(rt.body), 0, false)}}}
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = op
	}
	beside = append([]Beside{
		{Pattern: "GET /healthz", ID: "health", Summary: `Liveness and the engine in use: {"status": "ok", "engine": "sqlite"}`, Answers: "application/json"},
		{Pattern: "GET /openapi.json", ID: "openapi", Summary: "This document", Answers: "application/json"},
	}, beside...)
	for _, b := range beside {
		method, path := describeBeside(b)
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][method] = besideOperation(b, path)
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "logbook",
			"version": "1",
			"description": "The session ledger for AI agents. Every /v1 route takes Authorization: Bearer TOKEN. " +
				"Beside the API, the same server answers OTLP GenAI spans (POST /v1/traces), harness events (POST /v1/logs) and metrics (POST /v1/metrics), the MCP server (/mcp), Prometheus metrics and the web UI, described here too.",
		},
		"servers":  []any{map[string]any{"url": "/", "description": "the logbook server that serves this document"}},
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer"},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": "logbook_token", "description": "the web UI's sign-in, set by POST /sign-in"},
			},
			"schemas": map[string]any{"Problem": schemaOf(reflect.TypeOf(problem{}), 0, true)},
		},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("httpapi: the OpenAPI document does not encode: " + err.Error()) // maps of plain values always do
	}
	return out
}

// describeBeside returns the method and OpenAPI path of a route served
// beside the API: a pattern without a method is described as a POST, a
// folder ("GET /static/") as its files ("/static/{file}"), and "/{$}" as
// "/".
func describeBeside(b Beside) (method, path string) {
	method, path, ok := strings.Cut(b.Pattern, " ")
	if !ok {
		method, path = "POST", b.Pattern
	}
	path = strings.TrimSuffix(path, "{$}")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "{file}"
	}
	return strings.ToLower(method), path
}

// besideOperation describes a route served beside the API from b.
func besideOperation(b Beside, path string) map[string]any {
	answer := map[string]any{"description": b.Summary}
	if b.Answers != "" {
		answer["content"] = map[string]any{b.Answers: map[string]any{"schema": mediaSchema(b.Answers)}}
	}
	responses := map[string]any{"2XX": answer}
	if b.Refuses != "" {
		responses["4XX"] = map[string]any{"description": b.Refuses}
	}
	op := map[string]any{"summary": b.Summary, "operationId": b.ID, "responses": responses}
	switch b.Auth {
	case "bearer":
	case "cookie":
		op["security"] = []any{map[string]any{"session": []any{}}}
	default:
		op["security"] = []any{}
	}
	if len(b.Takes) > 0 {
		content := map[string]any{}
		for _, media := range b.Takes {
			content[media] = map[string]any{"schema": mediaSchema(media)}
		}
		op["requestBody"] = map[string]any{"required": true, "content": content}
	}
	if strings.HasSuffix(path, "{file}") {
		op["parameters"] = []any{map[string]any{"name": "file", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}}
	}
	if strings.Contains(path, "{id}") {
		op["parameters"] = []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}}
	}
	return op
}

// mediaSchema is the schema of a body of a media type served beside the
// API: text or bytes, or any JSON value.
func mediaSchema(media string) map[string]any {
	switch {
	case strings.Contains(media, "json"):
		return map[string]any{}
	case media == "application/x-www-form-urlencoded":
		return map[string]any{"type": "object"}
	case strings.HasPrefix(media, "text/"):
		return map[string]any{"type": "string"}
	}
	return map[string]any{"type": "string", "format": "binary"}
}

// queryParameter describes a query parameter as the handlers read it
// (queryInt, queryBool, queryTime, queryDuration); the others are text.
func queryParameter(name string) map[string]any {
	param := map[string]any{"name": name, "in": "query", "schema": map[string]any{"type": "string"}}
	switch name {
	case "limit", "after_seq", "min_tool_calls":
		param["schema"] = map[string]any{"type": "integer", "minimum": 0}
	case "all", "force", "subagents", "top_level":
		param["schema"] = map[string]any{"type": "boolean"}
	case "since", "until":
		param["description"] = "A time: " + strings.TrimPrefix(logbook.TimeHint, "write ") + "."
	case "by", "then":
		param["schema"] = map[string]any{"type": "string", "enum": logbook.StatsGroupings}
		param["description"] = "A grouping; then groups within by (by=day&then=outcome: outcomes per day). Days are UTC unless tz names a zone."
	case "tz":
		param["description"] = "The time zone days begin and end in, for by or then=day: an IANA name (Europe/Berlin) or UTC (the default)."
	case "min_duration":
		param["description"] = "A duration: 90m, 36h or 7d."
	case "q":
		param["schema"] = map[string]any{"type": "string", "maxLength": logbook.MaxQueryLen}
		param["description"] = fmt.Sprintf("Words that must all appear in the title or goal: at most %d words, %d characters.", logbook.MaxQueryWords, logbook.MaxQueryLen)
	}
	return param
}

// operationID names an operation from its pattern:
// "POST /v1/sessions/{id}/entries" is "post_sessions_id_entries".
func operationID(pattern string) string {
	replacer := strings.NewReplacer(" /v1/", "_", " /", "_", "/", "_", "{", "", "}", "")
	return strings.ToLower(replacer.Replace(pattern))
}

var (
	rawJSONType = reflect.TypeOf(json.RawMessage(nil))
	timeType    = reflect.TypeOf(time.Time{})
	refType     = reflect.TypeFor[logbook.Ref]()
	policyType  = reflect.TypeOf(classify.Policy{})
	shapedType  = reflect.TypeFor[shaped]()
)

// enums are the string types whose values are few and known: each is
// described with its values.
var enums = map[reflect.Type]func() []any{
	reflect.TypeFor[logbook.AlertKind]():  func() []any { return values(logbook.AlertKinds) },
	reflect.TypeFor[logbook.AlertScope](): func() []any { return values(logbook.AlertScopes) },
}

func values[S ~[]E, E ~string](known S) []any {
	out := make([]any, len(known))
	for i, v := range known {
		out[i] = string(v)
	}
	return out
}

// shaped is a type written in JSON as another type (its JSONShape).
type shaped interface{ JSONShape() any }

// schemaOf describes a value of type t as encoding/json reads or writes
// it. For an answer (written), every field without omitempty is required:
// encoding/json always writes it.
func schemaOf(t reflect.Type, depth int, answer bool) map[string]any {
	switch t {
	case rawJSONType:
		return map[string]any{} // any JSON value
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case refType: // a number when it is all digits, else a string
		return map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}}
	case policyType:
		return policySchema(depth, answer)
	}
	if known, ok := enums[t]; ok {
		return map[string]any{"type": "string", "enum": known()}
	}
	if t.Kind() != reflect.Pointer && t.Implements(shapedType) {
		// A type with its own MarshalJSON says which type it is written as.
		return schemaOf(reflect.TypeOf(reflect.Zero(t).Interface().(shaped).JSONShape()), depth, answer)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(schemaOf(t.Elem(), depth, answer))
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice: // a nil slice is null
		return nullable(map[string]any{"type": "array", "items": schemaOf(t.Elem(), depth+1, answer)})
	case reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), depth+1, answer)}
	case reflect.Map: // so is a nil map
		return nullable(map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), depth+1, answer)})
	case reflect.Struct:
		if depth > 4 {
			return map[string]any{"type": "object"}
		}
		properties := map[string]any{}
		var required []string
		addFields(t, properties, &required, depth, answer)
		schema := map[string]any{"type": "object", "properties": properties}
		if answer && len(required) > 0 {
			slices.Sort(required)
			schema["required"] = required
		}
		return schema
	}
	return map[string]any{}
}

// policySchema describes a classify.Policy as its MarshalJSON writes it:
// a member per class it names, holding a decision, "rules" and "claims".
func policySchema(depth int, answer bool) map[string]any {
	decisions := make([]any, len(classify.Decisions))
	for i, d := range classify.Decisions {
		decisions[i] = string(d)
	}
	properties := map[string]any{
		"rules":  schemaOf(reflect.TypeOf([]classify.Rule{}), depth+1, answer),
		"claims": schemaOf(reflect.TypeOf(classify.ClaimsPolicy{}), depth+1, answer),
	}
	for _, c := range classify.Classes {
		properties[string(c)] = map[string]any{"type": "string", "enum": decisions}
	}
	return map[string]any{"type": "object", "properties": properties, "additionalProperties": false}
}

// nullable marks schema as also taking null (OpenAPI 3.0's way: beside a
// type, so each branch of an anyOf).
func nullable(schema map[string]any) map[string]any {
	if branches, ok := schema["anyOf"].([]any); ok {
		for _, b := range branches {
			nullable(b.(map[string]any))
		}
		return schema
	}
	if len(schema) > 0 {
		schema["nullable"] = true
	}
	return schema
}

// addFields adds the JSON fields of struct type t to properties, and the
// names of those always written to required. As in encoding/json, a field
// of t hides one of the same name in a struct it embeds.
func addFields(t reflect.Type, properties map[string]any, required *[]string, depth int, answer bool) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, options, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		properties[name] = schemaOf(f.Type, depth+1, answer)
		if !strings.Contains(options, "omitempty") && !strings.Contains(options, "omitzero") {
			*required = append(*required, name)
		}
	}
	for _, ft := range embedded {
		inner := map[string]any{}
		var innerRequired []string
		addFields(ft, inner, &innerRequired, depth, answer)
		for name, schema := range inner {
			if _, hidden := properties[name]; !hidden {
				properties[name] = schema
				if slices.Contains(innerRequired, name) {
					*required = append(*required, name)
				}
			}
		}
	}
}
