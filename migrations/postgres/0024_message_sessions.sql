-- Which conversation a chat message went to, by the platform's id of the message, so that
-- recalling the message (Feishu's recall, Slack's delete) stops the turn it started. Rows older
-- than a day are forgotten.

CREATE TABLE message_sessions (
    tenant_id      TEXT NOT NULL,
    platform       VARCHAR(16) NOT NULL,
    message_ref    VARCHAR(128) NOT NULL,
    session_id     VARCHAR(64) NOT NULL,
    created_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, platform, message_ref)
);
