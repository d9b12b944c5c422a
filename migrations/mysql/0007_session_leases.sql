-- Session writer leases: the one process that drives a session. A process takes the lease before
-- it runs a turn; the token grows with every change of holder, and every step carries the token it
-- was queued under, so a process that lost the lease cannot write to the session any more.

ALTER TABLE sessions ADD COLUMN lease_holder VARCHAR(64) NULL;
ALTER TABLE sessions ADD COLUMN lease_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN lease_until_ms BIGINT NOT NULL DEFAULT 0;
