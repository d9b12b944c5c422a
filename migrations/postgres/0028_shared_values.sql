-- Short-lived values every replica reads (a WeCom callback stream's latest answer), for
-- deployments whose replicas share only the database; with Redis they live there instead.

CREATE TABLE shared_values (
    value_key      TEXT   NOT NULL PRIMARY KEY,
    value          TEXT   NOT NULL,
    expires_at_ms  BIGINT NOT NULL
);
CREATE INDEX shared_values_expiry ON shared_values (expires_at_ms);
