-- Which replica holds a running intake row and since when, so a replica restarted under the same
-- name gives back at once the rows its killed predecessor claimed before this start, instead of
-- waiting for their leases to lapse.

ALTER TABLE intake ADD COLUMN claimed_by TEXT;
ALTER TABLE intake ADD COLUMN claimed_at_ms INTEGER;
