-- Three tables were created without a collation of their own, so on a database whose default
-- collation ignores case (MariaDB's utf8mb4_general_ci, MySQL 8's utf8mb4_0900_ai_ci) their keys
-- compared case-insensitively: two apps whose ids differ only in case shared one connection
-- lease. Like every other table they compare exactly now. On TiDB, whose default is already
-- utf8mb4_bin, this changes nothing.

ALTER TABLE wakes CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
ALTER TABLE connection_leases CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
ALTER TABLE inbox_approvals CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
