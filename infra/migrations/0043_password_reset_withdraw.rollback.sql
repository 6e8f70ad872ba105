REVOKE DELETE ON password_resets FROM warble_accounts;
