-- Links that work once (connect and sign-in links): a link's id is written here when what it
-- connects is stored, and a link whose id is here is refused. `spender` is the random id of the
-- use that spent it: of racing uses, the one whose id is read back won.

CREATE TABLE spent_links (
    tenant_id      TEXT NOT NULL,
    link_id        VARCHAR(64) NOT NULL,
    purpose        VARCHAR(32) NOT NULL,
    spender        VARCHAR(40) NOT NULL,
    spent_at_ms    BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, link_id)
);
