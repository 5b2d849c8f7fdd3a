-- The tool-call audit says which calls the gate denied or asked about:
-- it pairs each call with the first note carrying its id (the hook's
-- record of the decision), looked up by (session, tool_call_id). Only
-- notes tied to a tool call are in the index.
CREATE INDEX entries_tool_notes ON entries (session_id, tool_call_id) WHERE kind = 'note' AND tool_call_id <> '';
