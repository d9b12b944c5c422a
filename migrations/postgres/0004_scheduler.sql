-- The scheduler's claim on an automation: the run it is running and until when that claim holds.
-- A process renews the lease of the runs it drives on every tick; a lease that lapses (the process
-- died) lets another process adopt the run instead of firing a second one.

ALTER TABLE automations ADD COLUMN running_run_id TEXT;
ALTER TABLE automations ADD COLUMN lease_until_ms BIGINT;
ALTER TABLE automation_runs ADD COLUMN artifacts_json TEXT;

-- Self-wake: a session asks to be resumed at a time, when a job completes, or when an event fires.
CREATE TABLE wakes (
    tenant_id      TEXT     NOT NULL,
    wake_id        TEXT     NOT NULL,
    session_id     TEXT     NOT NULL,
    kind           TEXT     NOT NULL,
    state          TEXT     NOT NULL,
    fire_at_ms     BIGINT,
    job_id         TEXT,
    event_key      TEXT,
    note           TEXT    NOT NULL,
    created_at_ms  BIGINT    NOT NULL,
    fired_at_ms    BIGINT,
    PRIMARY KEY (tenant_id, wake_id)
);
CREATE INDEX wakes_due ON wakes (state, fire_at_ms);
CREATE INDEX wakes_by_session ON wakes (tenant_id, session_id, state);
CREATE INDEX automations_leases ON automations (lease_until_ms);
