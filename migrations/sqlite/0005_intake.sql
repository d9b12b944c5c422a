-- Durable intake: every inbound chat delivery (message, click, command) is written here before the
-- platform is acknowledged, so an acknowledged delivery survives a crash. The key is the
-- platform's own delivery id, so a redelivery finds its row and is acknowledged without running
-- again. Workers claim rows with a lease; a lease that lapses (the worker died) lets another
-- worker claim the row again. Done and failed rows stay until expires_at_ms (the dedupe window).

CREATE TABLE intake (
    tenant_id       TEXT     NOT NULL,
    platform        TEXT     NOT NULL,
    delivery_id     TEXT     NOT NULL,
    kind            TEXT     NOT NULL,
    payload_json    TEXT     NOT NULL,
    state           TEXT     NOT NULL,
    attempts        INTEGER  NOT NULL,
    not_before_ms   INTEGER  NOT NULL,
    lease_until_ms  INTEGER,
    received_at_ms  INTEGER  NOT NULL,
    finished_at_ms  INTEGER,
    expires_at_ms   INTEGER  NOT NULL,
    error           TEXT,
    PRIMARY KEY (tenant_id, platform, delivery_id)
);
CREATE INDEX intake_due ON intake (state, not_before_ms);
CREATE INDEX intake_expiry ON intake (expires_at_ms);
