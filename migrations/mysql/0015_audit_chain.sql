-- The audit trail as a hash chain per tenant: each sealed record carries its place in the chain
-- (seq, from 1), the hash of the record before it and its own hash; the head row keeps the last
-- sealed place, so a deleted newest record shows too. Records are appended unsealed and sealed
-- in order shortly after, by whichever process holds the head row's lock.

ALTER TABLE audit_events ADD COLUMN seq BIGINT;
ALTER TABLE audit_events ADD COLUMN prev_hash VARCHAR(64);
ALTER TABLE audit_events ADD COLUMN hash VARCHAR(64);
CREATE UNIQUE INDEX audit_events_by_seq ON audit_events (tenant_id, seq);
CREATE INDEX audit_events_unsealed ON audit_events (seq);

CREATE TABLE audit_chain_heads (
    tenant_id     VARCHAR(64)    NOT NULL,
    seq           BIGINT  NOT NULL,
    hash          VARCHAR(64)    NOT NULL,
    sealed_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
