REVOKE UPDATE (suspended_at) ON users FROM warble_accounts;
ALTER TABLE users DROP COLUMN suspended_at;
