-- The audit outbox: how far each sink has received each tenant's chain. Sealed records after a
-- sink's place are still to be delivered to it, in chain order; a sink that is down keeps its
-- place, so nothing is lost and nothing is skipped when it returns.

CREATE TABLE audit_sink_cursors (
    sink           VARCHAR(64)    NOT NULL,
    tenant_id      VARCHAR(64)    NOT NULL,
    seq            BIGINT  NOT NULL,
    updated_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (sink, tenant_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
