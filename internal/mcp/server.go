package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/logbookhq/logbook/internal/buildinfo"
	"github.com/logbookhq/logbook/internal/ledger"
)

// toolset is logbook's tools on one server.
type toolset struct {
	// ledgerFor gives the ledger a tool call acts on.
	ledgerFor func(*sdk.CallToolRequest) (ledger.Ledger, error)
	// inProcess says ledgerFor gives the service itself, whose errors
	// other than the domain's are hidden from agents (see hideInternal).
	inProcess bool
	log       *slog.Logger
	// required lists each tool's required arguments with their
	// descriptions, for requireArguments.
	required map[string][]argument
}

type argument struct{ name, description string }

// newServer returns an MCP server with logbook's tools, acting on the
// ledger ledgerFor gives for each call (the service itself when inProcess).
func newServer(ledgerFor func(*sdk.CallToolRequest) (ledger.Ledger, error), inProcess bool, log *slog.Logger) *sdk.Server {
	log = orDiscard(log)
	s := sdk.NewServer(&sdk.Implementation{Name: "logbook", Title: "logbook", Version: buildinfo.Read().Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log})
	ts := &toolset{ledgerFor: ledgerFor, inProcess: inProcess, log: log, required: map[string][]argument{}}
	ts.register(s)
	s.AddReceivingMiddleware(ts.requireArguments)
	return s
}

// add adds a tool whose input schema is derived from In (a field without
// omitempty is required; its jsonschema tag describes it) and whose
// answer is run's result as JSON.
func add[In, Out any](s *sdk.Server, ts *toolset, tool *sdk.Tool, run func(context.Context, ledger.Ledger, In) (Out, error)) {
	schema, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[ref](): {Types: []string{"integer", "string"}},
	}})
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", tool.Name, err)) // a programming error, found by any test
	}
	tool.InputSchema = schema
	for _, name := range schema.Required {
		ts.required[tool.Name] = append(ts.required[tool.Name], argument{name, schema.Properties[name].Description})
	}
	sdk.AddTool(s, tool, handle(ts, tool.Name, run))
}

// handle runs a tool call on its ledger. Any error becomes a tool error
// whose text says what to fix (see describe); a panic is logged and
// becomes a tool error too, so a bad call never takes the server down.
func handle[In, Out any](ts *toolset, name string, run func(context.Context, ledger.Ledger, In) (Out, error)) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (_ *sdk.CallToolResult, out any, err error) {
		defer func() {
			if p := recover(); p != nil {
				ts.log.ErrorContext(ctx, "mcp tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				out, err = nil, errInternal
			}
		}()
		l, err := ts.ledgerFor(req)
		if err != nil {
			return nil, nil, err
		}
		result, err := run(ctx, l, in)
		if err != nil && ts.inProcess {
			err = ts.hideInternal(ctx, name, err)
		}
		if err != nil {
			return nil, nil, errors.New(describe(err))
		}
		return nil, result, nil
	}
}

// requireArguments answers a tool call that lacks a required argument (or
// gives it empty) with a tool error naming it, "session_id is required: the
// id of your session, …", before the SDK checks the arguments against the
// schema, which would answer in the words of JSON Schema.
func (ts *toolset) requireArguments(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		var args map[string]any
		if len(call.Params.Arguments) > 0 && json.Unmarshal(call.Params.Arguments, &args) != nil {
			return next(ctx, method, req) // not an object: the SDK says so
		}
		for _, arg := range ts.required[call.Params.Name] {
			if v, given := args[arg.name]; !given || v == nil || v == "" {
				result := &sdk.CallToolResult{}
				result.SetError(fmt.Errorf("%s is required: %s", arg.name, arg.description))
				return result, nil
			}
		}
		return next(ctx, method, req)
	}
}
