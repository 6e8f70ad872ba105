-- Account deletion (API.md "Deleting an account", docs/accounts.md). DELETE /v1/users/me moves
-- the account out of users in one transaction: its users row, sessions and search rows are
-- deleted (so its tokens, its login, every read of it and its username and email are gone at
-- the commit) and its id is written here, the only trace PostgreSQL keeps: no name, no email.
-- The row is the deletion workflow's outbox: finished_at stays NULL until the workflow has
-- removed everything the account made (DynamoDB, Redis, S3), and a workflow whose start was
-- lost is started again from the rows still unfinished (AccountDeletion.restart_stalled).
-- Grants: warble_accounts deletes (AccountsFunction); warble_reader is the workflow's role
-- (AccountDeletionFunction) and reads and finishes the rows.
-- depends: 0011_roles 0012_search_grants 0020_people_search

CREATE TABLE deleted_accounts (
    id          BIGINT PRIMARY KEY,
    deleted_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ
);
CREATE INDEX deleted_accounts_unfinished ON deleted_accounts (deleted_at) WHERE finished_at IS NULL;

GRANT SELECT, INSERT ON deleted_accounts TO warble_accounts;
GRANT DELETE ON users, sessions TO warble_accounts;
GRANT SELECT, UPDATE (finished_at) ON deleted_accounts TO warble_reader;
