-- Personas a tenant installed (built-ins live in the code, not here), the persona each channel
-- starts new sessions with, and the skills kept per tenant, per channel and per persona bundle.
--
-- An installed persona lands 'pending'; it becomes 'enabled' only when an admin consents to its
-- capabilities (the tools, connectors and models it asks for, one word each in a JSON list).

CREATE TABLE personas (
    tenant_id        VARCHAR(191) NOT NULL,
    persona_id       VARCHAR(191) NOT NULL,
    manifest         MEDIUMTEXT NOT NULL,
    source           MEDIUMTEXT NOT NULL,
    state            VARCHAR(16) NOT NULL,
    capabilities     MEDIUMTEXT NOT NULL,
    installed_by     VARCHAR(191) NOT NULL,
    installed_at_ms  BIGINT NOT NULL,
    consented_by     VARCHAR(191) NULL,
    consented_at_ms  BIGINT NULL,
    PRIMARY KEY (tenant_id, persona_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE channel_personas (
    tenant_id   VARCHAR(191) NOT NULL,
    surface     VARCHAR(16) NOT NULL,
    chat_id     VARCHAR(191) NOT NULL,
    persona_id  VARCHAR(191) NOT NULL,
    set_by      VARCHAR(191) NOT NULL,
    set_at_ms   BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, surface, chat_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- scope: 'tenant' (scope_key ''), 'channel' (scope_key '<surface>:<chat id>') or 'persona'
-- (scope_key the persona id; skills shipped in its bundle).
CREATE TABLE skills (
    tenant_id      VARCHAR(191) NOT NULL,
    scope          VARCHAR(16) NOT NULL,
    scope_key      VARCHAR(191) NOT NULL,
    name           VARCHAR(64) NOT NULL,
    description    MEDIUMTEXT NOT NULL,
    instructions   MEDIUMTEXT NOT NULL,
    allowed_tools  MEDIUMTEXT NOT NULL,
    created_by     VARCHAR(191) NULL,
    updated_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, scope, scope_key, name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
