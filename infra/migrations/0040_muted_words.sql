-- Muted words (API.md "Reports and moderation", docs/moderation.md): each user's list, one row,
-- replaced whole by PUT /v1/users/me/muted-words (AccountsFunction, warble_accounts). Every
-- other function reads it as warble_reader on a cache miss (the home timeline, hashtag pages,
-- replies and notifications filter by it; the export lists it). The row goes with its user
-- (ON DELETE CASCADE: the account deletion's users DELETE takes it in the same transaction).
-- depends: 0011_roles 0035_deleted_accounts

CREATE TABLE muted_words (
    user_id    BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    words      TEXT[] NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

GRANT SELECT ON muted_words TO warble_reader, warble_accounts;
GRANT INSERT, UPDATE, DELETE ON muted_words TO warble_accounts;
