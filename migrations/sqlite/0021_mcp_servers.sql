-- The MCP servers each tenant's admins registered. `definition` is the server's JSON definition
-- (transport, command or URL, folders, read-only tools, timeouts); secrets are never in it, only
-- references to the vault.

CREATE TABLE mcp_servers (
    tenant_id      TEXT NOT NULL,
    name           VARCHAR(32) NOT NULL,
    definition     TEXT NOT NULL,
    updated_by     TEXT NOT NULL,
    updated_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);
