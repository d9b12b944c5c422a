-- The compaction view of a session: what stands in for the older part of its history when a
-- model is called (JSON text, NULL until the conversation is first compacted). The history
-- itself is never changed.

ALTER TABLE sessions ADD COLUMN compaction_json TEXT;
