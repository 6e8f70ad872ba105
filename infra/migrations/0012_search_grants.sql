-- The database roles' grants on people search (0020): the search reads the prefixes and the
-- users' search_text (warble_search runs as its caller); the counter consumer copies
-- followers_count into users, and the trigger on users writes the prefixes as whoever wrote the
-- users row (a sign-up, a profile edit, an admin's creation, a count).
-- depends: 0011_roles 0020_people_search

GRANT SELECT (followers_count, search_text), UPDATE (followers_count) ON users TO warble_reader;
GRANT SELECT ON search_prefixes TO warble_reader;
GRANT UPDATE (followers_count) ON search_prefixes TO warble_reader;

GRANT SELECT (user_id), INSERT, DELETE ON search_prefixes TO warble_accounts, warble_operator;
