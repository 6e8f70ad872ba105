REVOKE ALL ON search_prefixes FROM warble_reader, warble_accounts, warble_operator;
REVOKE SELECT (followers_count, search_text), UPDATE (followers_count) ON users FROM warble_reader;
