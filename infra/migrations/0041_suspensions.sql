-- Suspensions (API.md "Reports and moderation", docs/moderation.md "Suspensions"): a moderator
-- suspends an account and lifts the suspension. The account's row stays whole (its follows,
-- tweets and counters are kept for the lift); suspended_at is the source of truth, written by
-- AccountsFunction (warble_accounts, warble.dal.suspensions), and every read of a profile
-- leaves a suspended account out (warble.dal.accounts: the user is a 404 to everyone, their
-- tweets are not rendered), so nothing is rewritten, whatever the account's followers.
-- depends: 0011_roles 0012_search_grants 0035_deleted_accounts 0040_muted_words

ALTER TABLE users ADD COLUMN suspended_at TIMESTAMPTZ;

GRANT SELECT (suspended_at) ON users TO warble_reader, warble_accounts, warble_operator;
GRANT UPDATE (suspended_at) ON users TO warble_accounts;
