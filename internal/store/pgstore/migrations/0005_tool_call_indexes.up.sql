-- The project-wide tool-call audit reads the newest calls first, by tool
-- or not: these let it walk entries by id from the newest and stop at a
-- page, instead of gathering every entry of the project and sorting.
DROP INDEX entries_tool_calls;
CREATE INDEX entries_tool_call_ids ON entries (id) WHERE kind = 'tool_call';
CREATE INDEX entries_tool_call_tools ON entries (tool, id) WHERE kind = 'tool_call';
