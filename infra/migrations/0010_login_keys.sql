-- Logins name an account by one rule (warble/domain/logins.py): ASCII letters folded,
-- nothing else, whatever the database's collation. lower(x COLLATE "C") is that fold in SQL;
-- these indexes serve the lookups by it. They are unique: two values equal under this fold
-- differ only in ASCII case, so the lower() indexes of 0001 already keep them apart.
-- depends: 0001_accounts

CREATE UNIQUE INDEX users_username_key_c ON users (lower(username COLLATE "C"));
CREATE UNIQUE INDEX users_email_key_c ON users (lower(email COLLATE "C"));
