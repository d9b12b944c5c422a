-- workmate foundation schema (MySQL, MariaDB, TiDB).
-- Every table carries tenant_id, and every primary or unique key starts with it.
-- Timestamps are Unix milliseconds; ids are text minted by the application; JSON is text.

CREATE TABLE tenants (
    tenant_id      VARCHAR(64)    NOT NULL PRIMARY KEY,
    name           TEXT    NOT NULL,
    settings_json  LONGTEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE users (
    tenant_id      VARCHAR(64)    NOT NULL,
    user_id        VARCHAR(64)    NOT NULL,
    display_name   TEXT    NOT NULL,
    email          TEXT,
    user_role      VARCHAR(32)    NOT NULL,
    sso_subject    TEXT,
    created_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE platform_identities (
    tenant_id         VARCHAR(64)    NOT NULL,
    platform          VARCHAR(32)    NOT NULL,
    platform_user_id  VARCHAR(191)    NOT NULL,
    user_id           VARCHAR(64)    NOT NULL,
    created_at_ms     BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, platform, platform_user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE sessions (
    tenant_id      VARCHAR(64)    NOT NULL,
    session_id     VARCHAR(64)    NOT NULL,
    surface        VARCHAR(32)    NOT NULL,
    chat_id        VARCHAR(191)    NOT NULL,
    thread_id      VARCHAR(191)    NOT NULL,
    owner_user_id  VARCHAR(64)    NOT NULL,
    title          TEXT,
    persona        TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    mode           VARCHAR(32)    NOT NULL,
    unattended     BIGINT  NOT NULL,
    last_seq       BIGINT  NOT NULL,
    message_count  BIGINT  NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id),
    UNIQUE (tenant_id, surface, chat_id, thread_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE messages (
    tenant_id      VARCHAR(64)    NOT NULL,
    session_id     VARCHAR(64)    NOT NULL,
    idx            BIGINT  NOT NULL,
    message_role   VARCHAR(32)    NOT NULL,
    body_json      LONGTEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, idx)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE session_events (
    tenant_id   VARCHAR(64)    NOT NULL,
    session_id  VARCHAR(64)    NOT NULL,
    seq         BIGINT  NOT NULL,
    turn_id     VARCHAR(64),
    kind        VARCHAR(32)    NOT NULL,
    at_ms       BIGINT  NOT NULL,
    body_json   LONGTEXT    NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE tool_calls (
    tenant_id       VARCHAR(64)    NOT NULL,
    session_id      VARCHAR(64)    NOT NULL,
    tool_call_id    VARCHAR(191)    NOT NULL,
    turn_id         VARCHAR(64),
    name            TEXT    NOT NULL,
    arguments_json  LONGTEXT    NOT NULL,
    state           VARCHAR(32)    NOT NULL,
    result_json     LONGTEXT,
    proposed_at_ms  BIGINT  NOT NULL,
    updated_at_ms   BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, tool_call_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE inbox_items (
    tenant_id        VARCHAR(64)    NOT NULL,
    item_id          VARCHAR(64)    NOT NULL,
    session_id       VARCHAR(64)    NOT NULL,
    tool_call_id     VARCHAR(191),
    kind             VARCHAR(32)    NOT NULL,
    title            TEXT    NOT NULL,
    body             LONGTEXT    NOT NULL,
    state            VARCHAR(32)    NOT NULL,
    inbox            VARCHAR(32)    NOT NULL,
    visibility       VARCHAR(32)    NOT NULL,
    requested_by     VARCHAR(64),
    data_json        LONGTEXT    NOT NULL,
    resolution_json  LONGTEXT,
    resolved_by      VARCHAR(64),
    resolved_via     VARCHAR(32),
    created_at_ms    BIGINT  NOT NULL,
    resolved_at_ms   BIGINT,
    PRIMARY KEY (tenant_id, item_id),
    UNIQUE (tenant_id, session_id, tool_call_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX inbox_items_pending ON inbox_items (tenant_id, state, created_at_ms);

CREATE TABLE automations (
    tenant_id          VARCHAR(64)    NOT NULL,
    automation_id      VARCHAR(64)    NOT NULL,
    title              TEXT    NOT NULL,
    instructions       LONGTEXT    NOT NULL,
    schedule_json      LONGTEXT    NOT NULL,
    owner_user_id      VARCHAR(64)    NOT NULL,
    origin_session_id  VARCHAR(64),
    enabled            BIGINT  NOT NULL,
    next_run_ms        BIGINT,
    last_run_ms        BIGINT,
    last_status        VARCHAR(32),
    run_count          BIGINT  NOT NULL,
    settings_json      LONGTEXT    NOT NULL,
    created_at_ms      BIGINT  NOT NULL,
    updated_at_ms      BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, automation_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX automations_due ON automations (enabled, next_run_ms);

CREATE TABLE automation_runs (
    tenant_id       VARCHAR(64)    NOT NULL,
    run_id          VARCHAR(64)    NOT NULL,
    automation_id   VARCHAR(64)    NOT NULL,
    session_id      VARCHAR(64)    NOT NULL,
    run_trigger     VARCHAR(32)    NOT NULL,
    status          VARCHAR(32)    NOT NULL,
    started_at_ms   BIGINT  NOT NULL,
    finished_at_ms  BIGINT,
    result_text     LONGTEXT,
    error_text      LONGTEXT,
    PRIMARY KEY (tenant_id, run_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX automation_runs_by_automation ON automation_runs (tenant_id, automation_id, started_at_ms);

CREATE TABLE memories (
    tenant_id      VARCHAR(64)    NOT NULL,
    memory_id      VARCHAR(64)    NOT NULL,
    scope          VARCHAR(32)    NOT NULL,
    owner_user_id  VARCHAR(64),
    workspace      TEXT,
    memory_key     TEXT,
    content        LONGTEXT    NOT NULL,
    summary        TEXT,
    created_at_ms  BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE audit_events (
    tenant_id   VARCHAR(64)    NOT NULL,
    audit_id    VARCHAR(64)    NOT NULL,
    at_ms       BIGINT  NOT NULL,
    session_id  VARCHAR(64),
    actor       TEXT,
    stage       VARCHAR(32)    NOT NULL,
    tool        TEXT,
    status      VARCHAR(32),
    body_json   LONGTEXT    NOT NULL,
    PRIMARY KEY (tenant_id, audit_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE card_messages (
    tenant_id           VARCHAR(64)    NOT NULL,
    session_id          VARCHAR(64)    NOT NULL,
    card_key            VARCHAR(191)    NOT NULL,
    platform            VARCHAR(32)    NOT NULL,
    chat_id             VARCHAR(191)    NOT NULL,
    platform_message_id VARCHAR(191)    NOT NULL,
    version             BIGINT  NOT NULL,
    updated_at_ms       BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, session_id, card_key, platform)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE inbound_dedupe (
    tenant_id      VARCHAR(64)    NOT NULL,
    platform       VARCHAR(32)    NOT NULL,
    event_id       VARCHAR(191)    NOT NULL,
    expires_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, platform, event_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX inbound_dedupe_expiry ON inbound_dedupe (expires_at_ms);
