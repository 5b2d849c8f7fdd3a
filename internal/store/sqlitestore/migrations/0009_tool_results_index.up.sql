-- The tool-call audit pairs each call with the first result carrying its
-- id, and looks only results up by (session, tool_call_id): calls need
-- not be in that index. Every hook's tool call was written into it for
-- nothing.
DROP INDEX entries_tool_call_id;
CREATE INDEX entries_tool_results ON entries (session_id, tool_call_id) WHERE kind = 'tool_result' AND tool_call_id <> '';
