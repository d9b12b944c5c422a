-- Personas a tenant installed (built-ins live in the code, not here), the persona each channel
-- starts new sessions with, and the skills kept per tenant, per channel and per persona bundle.
--
-- An installed persona lands 'pending'; it becomes 'enabled' only when an admin consents to its
-- capabilities (the tools, connectors and models it asks for, one word each in a JSON list).

CREATE TABLE personas (
    tenant_id        TEXT NOT NULL,
    persona_id       TEXT NOT NULL,
    manifest         TEXT NOT NULL,
    source           TEXT NOT NULL,
    state            TEXT NOT NULL,
    capabilities     TEXT NOT NULL,
    installed_by     TEXT NOT NULL,
    installed_at_ms  BIGINT NOT NULL,
    consented_by     TEXT NULL,
    consented_at_ms  BIGINT NULL,
    PRIMARY KEY (tenant_id, persona_id)
);

CREATE TABLE channel_personas (
    tenant_id   TEXT NOT NULL,
    surface     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    persona_id  TEXT NOT NULL,
    set_by      TEXT NOT NULL,
    set_at_ms   BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, surface, chat_id)
);

-- scope: 'tenant' (scope_key ''), 'channel' (scope_key '<surface>:<chat id>') or 'persona'
-- (scope_key the persona id; skills shipped in its bundle).
CREATE TABLE skills (
    tenant_id      TEXT NOT NULL,
    scope          TEXT NOT NULL,
    scope_key      TEXT NOT NULL,
    name           VARCHAR(64) NOT NULL,
    description    TEXT NOT NULL,
    instructions   TEXT NOT NULL,
    allowed_tools  TEXT NOT NULL,
    created_by     TEXT NULL,
    updated_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, scope, scope_key, name)
);
