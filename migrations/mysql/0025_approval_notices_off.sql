-- Approvers who turned off being told privately of prompts that wait for them
-- (`/workmate notify off`): a row per person, none while notices are on (the default).

CREATE TABLE approval_notices_off (
    tenant_id      VARCHAR(191) NOT NULL,
    user_id        VARCHAR(191) NOT NULL,
    since_ms       BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
