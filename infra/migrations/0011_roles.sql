-- Database roles: one per kind of function (template.yaml's DB_USER), each granted what its
-- queries need and nothing more (issue 33 item 5). They sign in to RDS Proxy with IAM tokens; the
-- proxy reaches the database with each role's secret, whose password MigrateFunction sets after
-- the migrations (infra/migrations/migrate.py). Locally they sign in without a password (the
-- local PostgreSQL trusts 127.0.0.1) and `make run` runs each function as its role, so a missing
-- grant fails the local stack as it would fail AWS.
--
--   warble_reader    every function but the two below: profiles (never a password hash) and the
--                    session check (reading a session, touching its last_seen_at)
--   warble_accounts  AccountsFunction: sign-up, login, sessions, profile edits
--   warble_operator  OperatorFunction: admins' accounts
--
-- A migration that adds a table or a column grants it to the roles that use it, in a migration
-- of its own that depends on this one (0012_search_grants.sql).
-- depends: 0010_login_keys

-- Roles belong to the whole cluster (every database of it): made once, whichever database's
-- migration comes first (locally, the tests' databases run theirs at once).
DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['warble_reader', 'warble_accounts', 'warble_operator'] LOOP
        BEGIN
            EXECUTE format('CREATE ROLE %I LOGIN', name);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA public TO warble_reader, warble_accounts, warble_operator;

GRANT SELECT (id, username, email, display_name, bio, created_at) ON users
    TO warble_reader, warble_accounts, warble_operator;
GRANT SELECT, UPDATE (last_seen_at) ON sessions TO warble_reader, warble_accounts;

GRANT SELECT (password_hash), INSERT, UPDATE (display_name, bio, updated_at) ON users
    TO warble_accounts;
GRANT INSERT, UPDATE (revoked_at) ON sessions TO warble_accounts;

GRANT INSERT ON users TO warble_operator;
