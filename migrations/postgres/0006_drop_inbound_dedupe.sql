-- The intake table (0005) keys every inbound delivery by the platform's id and keeps it for the
-- platform's dedupe window, so the older table of sightings is no longer read or written.
DROP TABLE inbound_dedupe;
