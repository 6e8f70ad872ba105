REVOKE UPDATE (password_hash) ON users FROM warble_accounts;
DROP TABLE password_resets;
