-- Approvals counted towards a prompt that needs several distinct approvers (a tenant's approval
-- quorum): one row per approver and item. The item resolves, in the same transaction as the
-- approval that reaches the quorum, when enough rows are there.

CREATE TABLE inbox_approvals (
    tenant_id     TEXT NOT NULL,
    item_id       TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    choice        TEXT NOT NULL,
    via           TEXT NOT NULL,
    approved_at_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, item_id, user_id)
);
