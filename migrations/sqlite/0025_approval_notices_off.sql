-- Approvers who turned off being told privately of prompts that wait for them
-- (`/workmate notify off`): a row per person, none while notices are on (the default).

CREATE TABLE approval_notices_off (
    tenant_id      TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    since_ms       BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
