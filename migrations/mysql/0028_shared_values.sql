-- Short-lived values every replica reads (a WeCom callback stream's latest answer), for
-- deployments whose replicas share only the database; with Redis they live there instead.

CREATE TABLE shared_values (
    value_key      VARCHAR(191) NOT NULL PRIMARY KEY,
    value          MEDIUMTEXT   NOT NULL,
    expires_at_ms  BIGINT       NOT NULL,
    INDEX shared_values_expiry (expires_at_ms)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
