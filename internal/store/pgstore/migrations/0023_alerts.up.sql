-- Alert rules, the alerts they raise and their delivery (issue 28):
-- logbook.AlertRule, logbook.Alert.
CREATE TABLE alert_rules (
    id          TEXT PRIMARY KEY,
    project     TEXT NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    threshold   BIGINT NOT NULL DEFAULT 0,
    webhook_url TEXT NOT NULL,
    format      TEXT NOT NULL,
    secret      TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
-- The rules a fact is checked against are read by project and kind (the
-- sweeper's idle rule by kind alone).
CREATE INDEX alert_rules_project ON alert_rules (project, kind);
CREATE INDEX alert_rules_kind ON alert_rules (kind);

-- The outbox: an alert is written in the transaction that changed the
-- facts, pending; a deliverer leases it by moving next_attempt_at past
-- its attempt, and on an answer marks it delivered or due again later.
-- A rule raises one alert per subject (the unique key).
CREATE TABLE alerts (
    id              TEXT PRIMARY KEY,
    rule_id         TEXT NOT NULL,
    project         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    subject         TEXT NOT NULL,
    session_id      TEXT NOT NULL DEFAULT '',
    summary         TEXT NOT NULL,
    details         TEXT,
    raised_at       BIGINT NOT NULL,
    status          TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    delivered_at    BIGINT,
    UNIQUE (rule_id, subject)
);
CREATE INDEX alerts_due ON alerts (next_attempt_at) WHERE status = 'pending';
CREATE INDEX alerts_project ON alerts (project, raised_at);

-- The delivery log: one row per attempt, numbered from 1 per alert.
CREATE TABLE alert_attempts (
    alert_id    TEXT NOT NULL,
    n           BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    status_code BIGINT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (alert_id, n)
);
