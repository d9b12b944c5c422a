-- A card's post is announced (a row with confirmed = 0, holding the id the platform reserved for
-- it, if any) before it is made, and confirmed once its message id is known, so a process that
-- finds a post announced but not confirmed finishes that post instead of making a second
-- message. Cards recorded before this column existed were posted.

ALTER TABLE card_messages ADD COLUMN confirmed BIGINT NOT NULL DEFAULT 1;
-- The cards touched last before a restart, which the next start shows in their final state.
CREATE INDEX card_messages_by_time ON card_messages (platform, updated_at_ms);
