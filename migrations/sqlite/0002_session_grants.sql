-- Session grants: what people allowed for the rest of a session (JSON text, NULL for none).

ALTER TABLE sessions ADD COLUMN grants_json TEXT;
