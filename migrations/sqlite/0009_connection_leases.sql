-- Long-connection leases: a platform connection that must be held by one process at a time (the
-- Feishu long connection, Slack Socket Mode) is opened only by the holder of its lease. The holder
-- renews it while the connection runs; a lapsed lease (the holder died) lets another take it over.
-- The token grows with every change of holder.

CREATE TABLE connection_leases (
    name      TEXT NOT NULL,
    holder    TEXT NOT NULL,
    token     BIGINT NOT NULL,
    until_ms  BIGINT NOT NULL,
    PRIMARY KEY (name)
);
