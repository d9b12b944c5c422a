-- The credential vault: secrets sealed with envelope encryption (see docs/adr/0015). A row holds
-- no plaintext: the secret is encrypted with its own AES-256-GCM data key (nonce, ciphertext),
-- and the data key is wrapped by the master key named by key_id. owner_id is '' for a
-- tenant-wide secret, else the user it belongs to. Rotation re-wraps data keys in place, found by
-- key_id.

CREATE TABLE secrets (
    tenant_id      TEXT NOT NULL,
    owner_id       TEXT NOT NULL,
    name           TEXT NOT NULL,
    key_id         TEXT NOT NULL,
    wrapped_key    BYTEA NOT NULL,
    nonce          BYTEA NOT NULL,
    ciphertext     BYTEA NOT NULL,
    created_at_ms  BIGINT NOT NULL,
    updated_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, owner_id, name)
);

CREATE INDEX secrets_by_key ON secrets (key_id, tenant_id);
