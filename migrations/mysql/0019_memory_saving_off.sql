-- Who turned memory saving off (`/workmate memory off`): a row per person, none while saving is
-- on (the default). The memory tools refuse to save, change or delete for them.

CREATE TABLE memory_saving_off (
    tenant_id      VARCHAR(64)  NOT NULL,
    user_id        VARCHAR(64)  NOT NULL,
    since_ms       BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
