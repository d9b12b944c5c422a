-- Who turned memory saving off (`/workmate memory off`): a row per person, none while saving is
-- on (the default). The memory tools refuse to save, change or delete for them.

CREATE TABLE memory_saving_off (
    tenant_id      TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    since_ms       BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
