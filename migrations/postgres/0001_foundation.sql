-- workmate foundation schema (PostgreSQL).
-- Every table carries tenant_id, and every primary or unique key starts with it.
-- Timestamps are Unix milliseconds; ids are text minted by the application; JSON is text.

CREATE TABLE tenants (
    tenant_id      TEXT    NOT NULL PRIMARY KEY,
    name           TEXT    NOT NULL,
    settings_json  TEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL
);

CREATE TABLE users (
    tenant_id      TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    display_name   TEXT    NOT NULL,
    email          TEXT,
    user_role      TEXT    NOT NULL,
    sso_subject    TEXT,
    created_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);

CREATE TABLE platform_identities (
    tenant_id         TEXT    NOT NULL,
    platform          TEXT    NOT NULL,
    platform_user_id  TEXT    NOT NULL,
    user_id           TEXT    NOT NULL,
    created_at_ms     BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, platform, platform_user_id)
);

CREATE TABLE sessions (
    tenant_id      TEXT    NOT NULL,
    session_id     TEXT    NOT NULL,
    surface        TEXT    NOT NULL,
    chat_id        TEXT    NOT NULL,
    thread_id      TEXT    NOT NULL,
    owner_user_id  TEXT    NOT NULL,
    title          TEXT,
    persona        TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    mode           TEXT    NOT NULL,
    unattended     BIGINT  NOT NULL,
    last_seq       BIGINT  NOT NULL,
    message_count  BIGINT  NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id),
    UNIQUE (tenant_id, surface, chat_id, thread_id)
);

CREATE TABLE messages (
    tenant_id      TEXT    NOT NULL,
    session_id     TEXT    NOT NULL,
    idx            BIGINT  NOT NULL,
    message_role   TEXT    NOT NULL,
    body_json      TEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, idx)
);

CREATE TABLE session_events (
    tenant_id   TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    seq         BIGINT  NOT NULL,
    turn_id     TEXT,
    kind        TEXT    NOT NULL,
    at_ms       BIGINT  NOT NULL,
    body_json   TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
);

CREATE TABLE tool_calls (
    tenant_id       TEXT    NOT NULL,
    session_id      TEXT    NOT NULL,
    tool_call_id    TEXT    NOT NULL,
    turn_id         TEXT,
    name            TEXT    NOT NULL,
    arguments_json  TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    result_json     TEXT,
    proposed_at_ms  BIGINT  NOT NULL,
    updated_at_ms   BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, tool_call_id)
);

CREATE TABLE inbox_items (
    tenant_id        TEXT    NOT NULL,
    item_id          TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    tool_call_id     TEXT,
    kind             TEXT    NOT NULL,
    title            TEXT    NOT NULL,
    body             TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    inbox            TEXT    NOT NULL,
    visibility       TEXT    NOT NULL,
    requested_by     TEXT,
    data_json        TEXT    NOT NULL,
    resolution_json  TEXT,
    resolved_by      TEXT,
    resolved_via     TEXT,
    created_at_ms    BIGINT  NOT NULL,
    resolved_at_ms   BIGINT,
    PRIMARY KEY (tenant_id, item_id),
    UNIQUE (tenant_id, session_id, tool_call_id)
);
CREATE INDEX inbox_items_pending ON inbox_items (tenant_id, state, created_at_ms);

CREATE TABLE automations (
    tenant_id          TEXT    NOT NULL,
    automation_id      TEXT    NOT NULL,
    title              TEXT    NOT NULL,
    instructions       TEXT    NOT NULL,
    schedule_json      TEXT    NOT NULL,
    owner_user_id      TEXT    NOT NULL,
    origin_session_id  TEXT,
    enabled            BIGINT  NOT NULL,
    next_run_ms        BIGINT,
    last_run_ms        BIGINT,
    last_status        TEXT,
    run_count          BIGINT  NOT NULL,
    settings_json      TEXT    NOT NULL,
    created_at_ms      BIGINT  NOT NULL,
    updated_at_ms      BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, automation_id)
);
CREATE INDEX automations_due ON automations (enabled, next_run_ms);

CREATE TABLE automation_runs (
    tenant_id       TEXT    NOT NULL,
    run_id          TEXT    NOT NULL,
    automation_id   TEXT    NOT NULL,
    session_id      TEXT    NOT NULL,
    run_trigger     TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    started_at_ms   BIGINT  NOT NULL,
    finished_at_ms  BIGINT,
    result_text     TEXT,
    error_text      TEXT,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE INDEX automation_runs_by_automation ON automation_runs (tenant_id, automation_id, started_at_ms);

CREATE TABLE memories (
    tenant_id      TEXT    NOT NULL,
    memory_id      TEXT    NOT NULL,
    scope          TEXT    NOT NULL,
    owner_user_id  TEXT,
    workspace      TEXT,
    memory_key     TEXT,
    content        TEXT    NOT NULL,
    summary        TEXT,
    created_at_ms  BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
);

CREATE TABLE audit_events (
    tenant_id   TEXT    NOT NULL,
    audit_id    TEXT    NOT NULL,
    at_ms       BIGINT  NOT NULL,
    session_id  TEXT,
    actor       TEXT,
    stage       TEXT    NOT NULL,
    tool        TEXT,
    status      TEXT,
    body_json   TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, audit_id)
);

CREATE TABLE card_messages (
    tenant_id           TEXT    NOT NULL,
    session_id          TEXT    NOT NULL,
    card_key            TEXT    NOT NULL,
    platform            TEXT    NOT NULL,
    chat_id             TEXT    NOT NULL,
    platform_message_id TEXT    NOT NULL,
    version             BIGINT  NOT NULL,
    updated_at_ms       BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, card_key, platform)
);

CREATE TABLE inbound_dedupe (
    tenant_id      TEXT    NOT NULL,
    platform       TEXT    NOT NULL,
    event_id       TEXT    NOT NULL,
    expires_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, platform, event_id)
);
CREATE INDEX inbound_dedupe_expiry ON inbound_dedupe (expires_at_ms);
