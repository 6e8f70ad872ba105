-- Reports and moderators' cases (API.md "Reports and moderation", docs/moderation.md "Reports
-- and cases"). PostgreSQL rather than DynamoDB: the queue is ordered by a count that changes
-- (distinct reporters, then age), deduplicated per reporter and target, one open case per target,
-- and moderators page it both ways; a partial unique index and an ordered index give each of
-- these in one statement, where DynamoDB would need a GSI rewritten on every report and
-- conditional writes across three items (Mastodon keeps its reports in PostgreSQL too).
--
-- report_cases: one row a case; every open report of one target belongs to its one open case
--   (report_cases_one_open). subject_id has no foreign key and subject/snapshot are copies: the
--   evidence outlives the reported account and its tweets until the retention purge
--   (REPORT_CASE_RETENTION_DAYS after closing; open cases are never purged).
-- reports: one row a report; (case_id, reporter_id) unique, so a reporter's report of a target
--   while its case is open is one row, however many requests race. reporter_count and reasons
--   on the case count its reports (one a reporter), raised in the report's transaction.
-- A reporter's reports go with the reporter (ON DELETE CASCADE, in the account deletion's users
-- DELETE); reports_forgotten takes them off their open cases' counts in that same transaction.
--
-- Grants: warble_accounts (ReportsFunction: its moderators' suspend ends sessions and sets
-- users.suspended_at, which only that role may) reads and writes them; warble_reader (the export
-- and CasesPurgeFunction) reads them and purges closed cases; no other role touches them.
-- depends: 0011_roles 0035_deleted_accounts 0040_muted_words

CREATE TABLE report_cases (
    id             BIGINT PRIMARY KEY,  -- a Snowflake: when the case opened
    target_type    TEXT NOT NULL CHECK (target_type IN ('user', 'tweet', 'message')),
    target_id      BIGINT NOT NULL,
    conversation_id BIGINT,  -- a message's conversation (a message is found, and removed, there)
    subject_id     BIGINT NOT NULL,
    subject        JSONB NOT NULL,  -- {id, username, display_name} when the case opened
    snapshot       JSONB NOT NULL,
    reporter_count INTEGER NOT NULL DEFAULT 0,
    reasons        JSONB NOT NULL DEFAULT '{}',
    status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    action         TEXT CHECK (action IN ('dismiss', 'remove', 'suspend')),
    note           TEXT,
    closed_by      BIGINT,
    closed_at      TIMESTAMPTZ,
    CHECK ((status = 'open') = (closed_at IS NULL))
);
CREATE UNIQUE INDEX report_cases_one_open ON report_cases (target_type, target_id)
    WHERE status = 'open';
CREATE INDEX report_cases_queue ON report_cases (reporter_count DESC, id) WHERE status = 'open';
CREATE INDEX report_cases_closed ON report_cases (closed_at DESC, id DESC) WHERE status = 'closed';

CREATE TABLE reports (
    id          BIGINT PRIMARY KEY,  -- a Snowflake: when it was made
    case_id     BIGINT NOT NULL REFERENCES report_cases (id) ON DELETE CASCADE,
    reporter_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    target_type TEXT NOT NULL,
    target_id   BIGINT NOT NULL,
    reason      TEXT NOT NULL,
    comment     TEXT,
    status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'actioned', 'dismissed')),
    resolved_at TIMESTAMPTZ,
    UNIQUE (case_id, reporter_id)
);
CREATE INDEX reports_by_reporter ON reports (reporter_id, id DESC);

CREATE FUNCTION report_cases_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE report_cases
       SET reporter_count = reporter_count - 1,
           reasons = jsonb_set(
               reasons, ARRAY[OLD.reason], to_jsonb(COALESCE((reasons ->> OLD.reason)::int, 1) - 1)
           )
     WHERE id = OLD.case_id AND status = 'open';
    RETURN NULL;
END
$$;
CREATE TRIGGER reports_forgotten AFTER DELETE ON reports
    FOR EACH ROW WHEN (OLD.status = 'open') EXECUTE FUNCTION report_cases_forget();

GRANT SELECT, INSERT, UPDATE ON report_cases, reports TO warble_accounts;
GRANT SELECT, DELETE ON report_cases TO warble_reader;
GRANT SELECT ON reports TO warble_reader;
