-- People search (API.md "Search and hashtags"; docs/search.md has the measurements behind it).
-- A user matches when the username, or a word of the display name, starts with the query,
-- ignoring case and accents. Every prefix (up to 10 characters) of those words is a row of
-- search_prefixes with the user's followers_count, so a query is one index-only range scan
-- that comes out ranked by followers and stops at its LIMIT, however common the prefix:
-- 0.1 to 0.8 ms at 1,000,000 users, where a trigram or full-text index over users took up to
-- 25 ms on prefixes shared by 2% of the users (they must sort every match).
-- The rows are written by a trigger in the same transaction as the users row, so a new account
-- or a profile edit is searchable as it commits; deleting a user deletes its rows (cascade).
-- followers_count is the search's copy of the counter (the counter consumer keeps it, a few
-- seconds behind): it orders candidates; the answer ranks them again by the live count.
-- depends: 0001_accounts

CREATE EXTENSION IF NOT EXISTS unaccent;

-- Lower case, accents off (unaccent's rules: é -> e, ß -> ss, ø -> o), every run of characters
-- that are not letters, digits or _ one space. IMMUTABLE for the generated column: unaccent()
-- is only STABLE because its dictionary could change, and ours is named, not looked up.
CREATE FUNCTION warble_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS
$$ SELECT btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, value)), '[^[:alnum:]_]+', ' ', 'g')) $$;

-- The words a user is found by: the whole username, then the display name's words.
CREATE FUNCTION warble_search_words(username text, display_name text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT array_remove(array[lower(username)] || string_to_array(coalesce(warble_fold(display_name), ''), ' '), '') $$;

-- ' <username> <word> <word>' (array_to_string is only STABLE: it could format any type).
CREATE FUNCTION warble_search_text(username text, display_name text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT ' ' || array_to_string(warble_search_words(username, display_name), ' ') $$;

ALTER TABLE users
    ADD COLUMN followers_count INTEGER NOT NULL DEFAULT 0,
    -- ' <username> <word> <word>': what a query longer than 10 characters, or of several
    -- words, is checked against (LIKE '% <query>%').
    ADD COLUMN search_text TEXT GENERATED ALWAYS AS
        (warble_search_text(username, display_name)) STORED;

CREATE TABLE search_prefixes (
    prefix          TEXT COLLATE "C" NOT NULL,
    user_id         BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    followers_count INTEGER NOT NULL,
    PRIMARY KEY (user_id, prefix)
);
CREATE INDEX search_prefixes_rank ON search_prefixes (prefix, followers_count DESC, user_id);

CREATE FUNCTION warble_users_search() RETURNS trigger
LANGUAGE plpgsql AS
$$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.username IS DISTINCT FROM OLD.username
            OR NEW.display_name IS DISTINCT FROM OLD.display_name THEN
        IF TG_OP = 'UPDATE' THEN
            DELETE FROM search_prefixes WHERE user_id = NEW.id;
        END IF;
        INSERT INTO search_prefixes (prefix, user_id, followers_count)
        SELECT DISTINCT left(word, n), NEW.id, NEW.followers_count
        FROM unnest(warble_search_words(NEW.username, NEW.display_name)) AS word,
             generate_series(1, 10) AS n
        WHERE n <= length(word);
    ELSIF NEW.followers_count IS DISTINCT FROM OLD.followers_count THEN
        UPDATE search_prefixes SET followers_count = NEW.followers_count WHERE user_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER users_search AFTER INSERT OR UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION warble_users_search();

INSERT INTO search_prefixes (prefix, user_id, followers_count)
SELECT DISTINCT left(word, n), u.id, u.followers_count
FROM users u, unnest(warble_search_words(u.username, u.display_name)) AS word,
     generate_series(1, 10) AS n
WHERE n <= length(word);

-- The candidates of one query: the user whose username is the query (any case), the best
-- ``k`` matches by followers, and the matches among ``friends``. Each case is its own
-- statement, so each gets its own plan (the common one: an index-only scan that stops at k).
CREATE FUNCTION warble_search(q text, friends bigint[], k integer)
RETURNS TABLE (user_id bigint, exact boolean)
LANGUAGE plpgsql STABLE AS
$$
DECLARE
    folded text := warble_fold(q);
    pattern text;
BEGIN
    IF folded IS NULL OR folded = '' THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT u.id, true FROM users u WHERE lower(u.username) = lower(btrim(q));
    IF length(folded) <= 10 AND position(' ' IN folded) = 0 THEN
        RETURN QUERY
            SELECT p.user_id, false FROM search_prefixes p
            WHERE p.prefix = folded
            ORDER BY p.followers_count DESC, p.user_id LIMIT k;
        RETURN QUERY
            SELECT p.user_id, false FROM search_prefixes p
            WHERE p.user_id = ANY (friends) AND p.prefix = folded;
    ELSE
        pattern := '% ' || replace(replace(replace(folded, '\', '\\'), '%', '\%'), '_', '\_') || '%';
        RETURN QUERY
            SELECT p.user_id, false FROM search_prefixes p JOIN users u ON u.id = p.user_id
            WHERE p.prefix = left(split_part(folded, ' ', 1), 10) AND u.search_text LIKE pattern
            ORDER BY p.followers_count DESC, p.user_id LIMIT k;
        RETURN QUERY
            SELECT u.id, false FROM users u
            WHERE u.id = ANY (friends) AND u.search_text LIKE pattern;
    END IF;
END
$$;
