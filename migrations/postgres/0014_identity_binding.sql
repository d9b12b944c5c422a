-- Chat accounts bound to directory subjects: the directory groups a bound user was last seen
-- with (for approver groups that name directory groups), when the one-time "link your account"
-- card was shown to them, and an index to find every account bound to a subject (sign-in and
-- offboarding reach them all).

ALTER TABLE users ADD COLUMN directory_groups_json TEXT;
ALTER TABLE users ADD COLUMN link_offered_at_ms BIGINT;
CREATE INDEX users_by_subject ON users (sso_subject);
