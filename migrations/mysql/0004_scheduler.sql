-- The scheduler's claim on an automation: the run it is running and until when that claim holds.
-- A process renews the lease of the runs it drives on every tick; a lease that lapses (the process
-- died) lets another process adopt the run instead of firing a second one.

ALTER TABLE automations ADD COLUMN running_run_id VARCHAR(64);
ALTER TABLE automations ADD COLUMN lease_until_ms BIGINT;
ALTER TABLE automation_runs ADD COLUMN artifacts_json LONGTEXT;

-- Self-wake: a session asks to be resumed at a time, when a job completes, or when an event fires.
CREATE TABLE wakes (
    tenant_id      VARCHAR(64)     NOT NULL,
    wake_id        VARCHAR(64)     NOT NULL,
    session_id     VARCHAR(64)     NOT NULL,
    kind           VARCHAR(64)     NOT NULL,
    state          VARCHAR(64)     NOT NULL,
    fire_at_ms     BIGINT,
    job_id         VARCHAR(255),
    event_key      VARCHAR(255),
    note           LONGTEXT    NOT NULL,
    created_at_ms  BIGINT    NOT NULL,
    fired_at_ms    BIGINT,
    PRIMARY KEY (tenant_id, wake_id)
);
CREATE INDEX wakes_due ON wakes (state, fire_at_ms);
CREATE INDEX wakes_by_session ON wakes (tenant_id, session_id, state);
CREATE INDEX automations_leases ON automations (lease_until_ms);
