// Package otlp receives OpenTelemetry traces (OTLP/HTTP, POST /v1/traces)
// and records the spans that follow the GenAI semantic conventions as
// logbook sessions and entries, so any agent framework with OpenTelemetry
// instrumentation reports into logbook without a hook of its own. It also
// receives logs (POST /v1/logs): the events Claude Code and Codex CLI
// export of their sessions (see "Harness events" below), and metrics
// (POST /v1/metrics), whose Claude Code data points start the sessions
// they name (see ingestMetrics).
//
// # Wire
//
// An export is an ExportTraceServiceRequest in protobuf
// (application/x-protobuf, decoded with go.opentelemetry.io/proto/otlp: its
// wire form is that of TracesData, so no gRPC code is linked) or in OTLP/JSON
// (application/json: lowerCamelCase keys, 64-bit integers as numbers or
// strings), gzip-compressed or not. Trace and span ids are read in hex or
// base64. The answer is an ExportTraceServiceResponse in the same encoding,
// with partial_success (rejected_spans, error_message) when GenAI spans could
// not be stored.
//
// # Mapping
//
//   - Sessions: an invoke_agent span is a session; one under another
//     invoke_agent span (in the same export) is a subagent of it. The top
//     session is named by gen_ai.conversation.id, else by the trace. Other
//     GenAI spans write to the session of the nearest invoke_agent above
//     them. The harness is the resource's service.name ("otel" without one),
//     the project the resource attribute logbook.project, else the token's.
//     The model is gen_ai.response.model or gen_ai.request.model, prefixed
//     with the provider (gen_ai.provider.name, or gen_ai.system before
//     semconv 1.37); the agent type is gen_ai.agent.name.
//   - Model calls (chat, text_completion, generate_content): user messages
//     of gen_ai.input.messages become prompts, tool_call_response parts tool
//     results; gen_ai.output.messages give assistant text, reasoning and
//     tool calls. gen_ai.usage.input_tokens and output_tokens (or the older
//     prompt_tokens and completion_tokens) go on the call's first entry, or
//     on a note when the call's content was not captured.
//   - execute_tool spans: a tool_call (gen_ai.tool.name,
//     gen_ai.tool.call.id, gen_ai.tool.call.arguments) at the span's start
//     and a tool_result (gen_ai.tool.call.result; an error when the span's
//     status is) at its end.
//   - Spans without gen_ai.* attributes are accepted and ignored.
//
// Keys come from the trace and span ids, from tool call ids (so a call the
// model asked for and the execute_tool span that ran it are one entry) or,
// for messages, from their content within the trace or conversation (so
// the history each model call repeats is recorded once): a retried export
// adds nothing.
//
// # Harness events
//
// A log record is an event of Claude Code when its name (event_name, the
// event.name attribute or the body) starts with claude_code., of Codex when
// it starts with codex.; other records are accepted and ignored. The
// session is the harness's own (harness claude-code or codex, named by
// session.id or conversation.id), the one logbook's hooks and importers
// write to, started when the events come first; a session that has ended
// stays ended and takes no late events. user_prompt gives a prompt when its
// text is exported (a prompt the session holds from another source, same
// text within two minutes, keeps its entry); tool_result a tool call and its
// result keyed by tool_use_id or call_id as the hooks key them;
// api_request (Codex: sse_event response.completed) a note with the call's
// usage; api_error and a denied tool_decision a note. Other keys come from
// event.sequence, or from the event's content.
package otlp
