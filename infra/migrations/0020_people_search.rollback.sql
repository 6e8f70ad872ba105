-- depends: 0001_accounts
DROP FUNCTION warble_search(text, bigint[], integer);
DROP TRIGGER users_search ON users;
DROP FUNCTION warble_users_search();
DROP TABLE search_prefixes;
ALTER TABLE users DROP COLUMN search_text, DROP COLUMN followers_count;
DROP FUNCTION warble_search_text(text, text);
DROP FUNCTION warble_search_words(text, text);
DROP FUNCTION warble_fold(text);
