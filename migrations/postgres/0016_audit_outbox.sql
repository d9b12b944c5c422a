-- The audit outbox: how far each sink has received each tenant's chain. Sealed records after a
-- sink's place are still to be delivered to it, in chain order; a sink that is down keeps its
-- place, so nothing is lost and nothing is skipped when it returns.

CREATE TABLE audit_sink_cursors (
    sink           TEXT    NOT NULL,
    tenant_id      TEXT    NOT NULL,
    seq            BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (sink, tenant_id)
);
