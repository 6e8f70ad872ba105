-- Password reset tokens (API.md "Accounts", "Password reset"; docs/accounts.md). A token is
-- stored only as its SHA-256 hash; it works once (used_at), for 30 minutes (expires_at), and a
-- newer token of the same user voids the older ones (voided_at). The rows of the last hour are
-- also what the cap of 3 emails per address and hour counts, under a lock on the users row
-- (warble.dal.passwords), so racing requests cannot pass it. Deleting a user deletes its rows.
-- The grants are here too: AccountsFunction (warble_accounts) issues and redeems the tokens and
-- writes the new password hash (a password change or a reset).
-- depends: 0011_roles

CREATE TABLE password_resets (
    token_hash BYTEA PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ,
    voided_at  TIMESTAMPTZ
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id, created_at DESC);

GRANT SELECT, INSERT, UPDATE (used_at, voided_at) ON password_resets TO warble_accounts;
GRANT UPDATE (password_hash) ON users TO warble_accounts;
