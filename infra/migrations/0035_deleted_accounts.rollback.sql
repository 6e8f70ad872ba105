REVOKE DELETE ON users, sessions FROM warble_accounts;
DROP TABLE deleted_accounts;
