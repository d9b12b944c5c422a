-- Offboarding: a deactivated user keeps their row (their history, audit and sessions still name
-- them), marked with when they were deactivated; every surface refuses them from then on.

ALTER TABLE users ADD COLUMN disabled_at_ms BIGINT;
