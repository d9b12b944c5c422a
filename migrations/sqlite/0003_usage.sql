-- Token usage: one row per model call, for per-user and per-model reports and daily budgets.
-- `day` is the UTC date (YYYY-MM-DD) of at_ms, computed by the application.

CREATE TABLE usage_records (
    tenant_id          TEXT    NOT NULL,
    record_id          TEXT    NOT NULL,
    at_ms              INTEGER NOT NULL,
    day                TEXT    NOT NULL,
    session_id         TEXT    NOT NULL,
    user_id            TEXT,
    model              TEXT    NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, record_id)
);

CREATE INDEX usage_records_by_day ON usage_records (tenant_id, day);
CREATE INDEX usage_records_by_user_day ON usage_records (tenant_id, user_id, day);
