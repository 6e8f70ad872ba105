DROP INDEX IF EXISTS users_email_key_c;
DROP INDEX IF EXISTS users_username_key_c;
