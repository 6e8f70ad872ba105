-- Accounts and sessions.
-- Username and email are unique regardless of case: unique indexes on lower(), enforced by the
-- database itself, so two racing signups cannot both win.
-- depends:

CREATE TABLE users (
    id            BIGINT PRIMARY KEY,
    username      TEXT NOT NULL CHECK (username ~ '^[A-Za-z0-9_]{1,15}$'),
    email         TEXT NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    password_hash TEXT NOT NULL,
    display_name  TEXT NOT NULL DEFAULT '' CHECK (char_length(display_name) <= 50),
    bio           TEXT NOT NULL DEFAULT '' CHECK (char_length(bio) <= 160),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_username_ci_key ON users (lower(username));
CREATE UNIQUE INDEX users_email_ci_key ON users (lower(email));

CREATE TABLE sessions (
    id           BIGINT PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash   BYTEA NOT NULL UNIQUE,
    device       TEXT NOT NULL DEFAULT '' CHECK (char_length(device) <= 100),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX sessions_user_live_idx ON sessions (user_id, id DESC) WHERE revoked_at IS NULL;
