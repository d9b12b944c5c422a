-- A shared conversation: anyone in its group or thread may talk to it (an admin chose
-- `/workmate settings conversations shared` there); 0 for the owner's own (the default).

ALTER TABLE sessions ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
