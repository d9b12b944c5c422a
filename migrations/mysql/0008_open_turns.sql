-- The turn a session is in the middle of: set when a turn starts, cleared by the event that ends
-- it, in the same transaction. A session whose turn stays open while no live process holds its
-- lease was cut short by a crash, and is finished by recovery.

ALTER TABLE sessions ADD COLUMN open_turn_id VARCHAR(64) NULL;
CREATE INDEX sessions_open_turn ON sessions (open_turn_id);
