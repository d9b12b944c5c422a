-- Durable intake: every inbound chat delivery (message, click, command) is written here before the
-- platform is acknowledged, so an acknowledged delivery survives a crash. The key is the
-- platform's own delivery id, so a redelivery finds its row and is acknowledged without running
-- again. Workers claim rows with a lease; a lease that lapses (the worker died) lets another
-- worker claim the row again. Done and failed rows stay until expires_at_ms (the dedupe window).

CREATE TABLE intake (
    tenant_id       VARCHAR(64) NOT NULL,
    platform        VARCHAR(32) NOT NULL,
    delivery_id     VARCHAR(191) NOT NULL,
    kind            VARCHAR(64) NOT NULL,
    payload_json    LONGTEXT NOT NULL,
    state           VARCHAR(32) NOT NULL,
    attempts        BIGINT   NOT NULL,
    not_before_ms   BIGINT   NOT NULL,
    lease_until_ms  BIGINT,
    received_at_ms  BIGINT   NOT NULL,
    finished_at_ms  BIGINT,
    expires_at_ms   BIGINT   NOT NULL,
    error           LONGTEXT,
    PRIMARY KEY (tenant_id, platform, delivery_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX intake_due ON intake (state, not_before_ms);
CREATE INDEX intake_expiry ON intake (expires_at_ms);
