-- The cost_over_budget alert rule (issue 28): its budget, in millionths
-- of a US dollar as costs are kept, and its scope (session, agent_day or
-- project_day; logbook.AlertScope). Other kinds keep 0 and ''.
ALTER TABLE alert_rules ADD COLUMN budget_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE alert_rules ADD COLUMN scope TEXT NOT NULL DEFAULT '';
