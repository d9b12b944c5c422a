-- The audit trail as a hash chain per tenant: each sealed record carries its place in the chain
-- (seq, from 1), the hash of the record before it and its own hash; the head row keeps the last
-- sealed place, so a deleted newest record shows too. Records are appended unsealed and sealed
-- in order shortly after, by whichever process holds the head row's lock.

ALTER TABLE audit_events ADD COLUMN seq BIGINT;
ALTER TABLE audit_events ADD COLUMN prev_hash TEXT;
ALTER TABLE audit_events ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX audit_events_by_seq ON audit_events (tenant_id, seq);
CREATE INDEX audit_events_unsealed ON audit_events (seq);

CREATE TABLE audit_chain_heads (
    tenant_id     TEXT    NOT NULL,
    seq           BIGINT  NOT NULL,
    hash          TEXT    NOT NULL,
    sealed_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id)
);
