"""Reports and moderators' cases against real PostgreSQL, Redis and moto (API.md "Reports and
moderation"): racing reports make one and count once, the queue's orders and pages, a resolve
that removes a tweet or a message, racing resolves, the reporter's account deletion and the
retention purge."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from warble import keys, services
from warble.domain.reports.service import ReportService
from warble.errors import Conflict, NotFound

from tests.integration.test_conversations import befriend

pytestmark = [pytest.mark.integration]
PASSWORD = "password1"


@pytest.fixture
def reports(accounts, moto, pg, monkeypatch) -> Iterator[ReportService]:
    monkeypatch.setenv("ADMIN_USERNAMES", "mod")
    services.reset()
    pg.execute("TRUNCATE report_cases CASCADE")
    yield services.reports()
    services.reset()


@pytest.fixture
def person(reports) -> Callable[[str], int]:
    def make(name: str) -> int:
        if name == "mod":  # an admin's name cannot be signed up: the operator creates it
            return services.accounts().create_admin(name, f"{name}@x.io", PASSWORD)[0]
        return int(services.accounts().signup(name, f"{name}@x.io", PASSWORD, None, "").user["id"])

    return make


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at once on threads (each its own PostgreSQL connection); their outcomes,
    answers or exceptions, in order."""
    outcomes: list[Any] = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = calls[i]()
        except Exception as exc:  # the outcome under test
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def test_racing_identical_reports_make_one_report_and_count_once(reports, person, pg, redis):
    rita, aldo = person("rita"), person("aldo")
    tweet = services.tweets().post(aldo, "rude", None, [])
    outcomes = race(*[lambda: reports.report(rita, "tweet", int(tweet.id), "abuse", None)] * 4)
    assert sorted(made for _, made in outcomes) == [False, False, False, True]
    assert len({report.id for report, _ in outcomes}) == 1
    assert pg.execute("SELECT count(*) FROM reports").fetchone()[0] == 1
    assert pg.execute("SELECT reporter_count FROM report_cases").fetchone()[0] == 1
    assert redis.get(keys.reports_budget(rita)) == "1"


def test_racing_first_reports_of_a_target_share_one_case(reports, person, pg):
    aldo = person("aldo")
    reporters = [person(f"r{i}") for i in range(4)]
    race(*[lambda r=r: reports.report(r, "user", aldo, "spam", None) for r in reporters])
    assert pg.execute("SELECT count(*), max(reporter_count) FROM report_cases").fetchone() == (1, 4)


def test_the_queue_orders_and_pages_on_postgresql(reports, person):
    mod = person("mod")
    old, loud, new = person("old"), person("loud"), person("new")
    reporters = [person(f"r{i}") for i in range(3)]
    reports.report(reporters[0], "user", old, "spam", None)
    for r in reporters:
        reports.report(r, "user", loud, "hate", None)
    reports.report(reporters[1], "user", new, "spam", None)
    seen, cursor = [], None
    while True:
        page = reports.cases(mod, "open", 1, cursor)
        seen += [(c.target_id, c.reporter_count) for c in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [(str(loud), 3), (str(old), 1), (str(new), 1)]
    # closed: newest closing first
    by_target = {c.target_id: c.id for c in reports.cases(mod, "open", 10, None).items}
    for target in (new, old, loud):
        reports.resolve(mod, int(by_target[str(target)]), "dismiss", None)
    first = reports.cases(mod, "closed", 2, None)
    rest = reports.cases(mod, "closed", 2, first.next_cursor)
    assert [c.target_id for c in first.items + rest.items] == [str(loud), str(old), str(new)]
    assert rest.next_cursor is None


def test_remove_deletes_the_tweet_and_the_snapshot_stays(reports, person):
    rita, aldo, mod = person("rita"), person("aldo"), person("mod")
    tweet = services.tweets().post(aldo, "buy followers", None, [])
    reports.report(rita, "tweet", int(tweet.id), "spam", "bot")
    [case] = reports.cases(mod, "open", 10, None).items
    closed = reports.resolve(mod, int(case.id), "remove", "spam")
    assert (closed.status, closed.action) == ("closed", "remove")
    assert services.tweets().load_one(int(tweet.id)) is None
    with pytest.raises(NotFound):
        services.tweets().get(rita, int(tweet.id))
    [kept] = reports.cases(mod, "closed", 10, None).items
    assert kept.snapshot.text == "buy followers"
    assert reports.mine(rita, 10, None).items[0].status == "actioned"


def test_racing_resolves_one_wins(reports, person):
    rita, aldo, mod = person("rita"), person("aldo"), person("mod")
    reports.report(rita, "user", aldo, "spam", None)
    [case] = reports.cases(mod, "open", 10, None).items
    outcomes = race(*[lambda: reports.resolve(mod, int(case.id), "dismiss", None)] * 3)
    assert sum(isinstance(o, Conflict) for o in outcomes) == 2
    assert [o.status for o in outcomes if not isinstance(o, Exception)] == ["closed"]


def test_a_message_is_reported_by_a_member_only_and_removed_for_both(reports, person):
    rita, aldo, eve, mod = person("rita"), person("aldo"), person("eve"), person("mod")
    befriend(rita, aldo)
    dms = services.conversations()
    conversation, _ = dms.open(rita, aldo)
    kept = dms.send(aldo, int(conversation.id), "hello").view()
    nasty = dms.send(aldo, int(conversation.id), "nasty words").view()
    with pytest.raises(NotFound):  # not in the conversation
        reports.report(eve, "message", int(nasty.id), "abuse", None)
    report, made = reports.report(rita, "message", int(nasty.id), "abuse", None)
    assert made and report.target_type == "message"
    [case] = reports.cases(mod, "open", 10, None).items
    assert (case.subject.id, case.snapshot.text) == (str(aldo), "nasty words")
    reports.resolve(mod, int(case.id), "remove", None)
    for member in (rita, aldo):
        history = dms.history(member, int(conversation.id), 10, None)
        assert [m.text for m in history.items] == [kept.text]
        [listed] = dms.latest(member, 10, None).items
        assert listed.last_message is None  # the preview was the removed message


def test_a_reporters_deletion_takes_their_reports_off_the_case(reports, person, pg):
    rita, ravi, aldo, mod = person("rita"), person("ravi"), person("aldo"), person("mod")
    reports.report(rita, "user", aldo, "spam", None)
    reports.report(ravi, "user", aldo, "hate", None)
    accounts = services.accounts()
    session = accounts.login("rita", PASSWORD, "")
    accounts.delete_account(accounts.require_token(session.token), PASSWORD)
    [case] = reports.cases(mod, "open", 10, None).items
    assert (case.reporter_count, case.reasons) == (1, {"hate": 1})
    assert pg.execute("SELECT count(*) FROM reports").fetchone()[0] == 1


def test_a_subjects_deletion_keeps_the_case_and_its_snapshot(reports, person):
    rita, aldo, mod = person("rita"), person("aldo"), person("mod")
    reports.report(rita, "user", aldo, "impersonation", None)
    accounts = services.accounts()
    session = accounts.login("aldo", PASSWORD, "")
    accounts.delete_account(accounts.require_token(session.token), PASSWORD)
    [case] = reports.cases(mod, "open", 10, None).items
    assert (case.subject.id, case.subject.username) == (str(aldo), "aldo")
    assert case.snapshot.display_name == "aldo"


def test_the_purge_deletes_closed_cases_past_their_retention(reports, person, pg):
    rita, aldo, bo, mod = person("rita"), person("aldo"), person("bo"), person("mod")
    reports.report(rita, "user", aldo, "spam", None)
    reports.report(rita, "user", bo, "spam", None)
    cases = {c.target_id: c.id for c in reports.cases(mod, "open", 10, None).items}
    reports.resolve(mod, int(cases[str(aldo)]), "dismiss", None)
    pg.execute(
        "UPDATE report_cases SET closed_at = now() - interval '91 days' WHERE id = %s",
        (int(cases[str(aldo)]),),
    )
    assert reports.purge() == 1
    assert [r.target_id for r in reports.mine(rita, 10, None).items] == [str(bo)]
    assert [c.target_id for c in reports.cases(mod, "open", 10, None).items] == [str(bo)]
