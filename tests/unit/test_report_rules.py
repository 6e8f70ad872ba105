"""Reports' and cases' rules (API.md "Reports and moderation") on the unit tier's World (the
production builders on in-memory stores): dedup, the budget, self-reports, the snapshot, the
queue's order, resolving (dismiss, remove, suspend through its port) and the retention purge."""

from __future__ import annotations

import pytest
from warble.errors import Conflict, Forbidden, NotFound, RateLimited, ValidationFailed

from tests.unit.fakes import FakeSessionEnder, World

pytestmark = pytest.mark.unit


@pytest.fixture
def world() -> World:
    return World()


def people(world: World) -> tuple[int, int, int]:
    """(reporter, author, moderator)."""
    return world.user("rita"), world.user("aldo"), world.user("warble_admin")


def test_a_report_is_made_once_per_reporter_and_open_case(world: World):
    rita, aldo, _ = people(world)
    tweet = world.tweets.post(aldo, "rude words", None, [])
    first, made = world.reports.report(rita, "tweet", int(tweet.id), "abuse", "mean")
    again, made_again = world.reports.report(rita, "tweet", int(tweet.id), "spam", None)
    assert made and not made_again
    assert again == first  # the first report, as it was (its reason and comment kept)
    assert (first.status, first.reason, first.comment, first.resolved_at) == (
        "open", "abuse", "mean", None,
    )  # fmt: skip
    assert world.window_counter.used == {f"reports:{rita}": 1}  # the repeat spent nothing


def test_racing_twins_make_one_report_and_count_once(world: World):
    rita, aldo, _ = people(world)
    tweet = world.tweets.post(aldo, "rude words", None, [])
    twin = world.report_store
    from warble.domain.reports.ports import StoredReport

    # Another request of rita's committed the same report between this one's check and write.
    twin.racing_twin = StoredReport(1, 0, rita, "tweet", int(tweet.id), "abuse", None)
    report, made = world.reports.report(rita, "tweet", int(tweet.id), "abuse", None)
    assert not made and report.id == "1"
    assert len(twin.reports) == 1
    assert world.window_counter.used == {f"reports:{rita}": 0}  # given back: counted once


def test_twenty_new_reports_an_hour_then_429(world: World):
    rita, *_ = people(world)
    targets = [world.user() for _ in range(21)]
    for target in targets[:20]:
        world.reports.report(rita, "user", target, "spam", None)
    with pytest.raises(RateLimited):
        world.reports.report(rita, "user", targets[20], "spam", None)
    assert len(world.report_store.reports) == 20  # the refused one wrote nothing
    # A report that exists already is answered again, budget spent or not.
    _, made = world.reports.report(rita, "user", targets[0], "spam", None)
    assert made is False


def test_oneself_and_ones_own_tweet_cannot_be_reported(world: World):
    rita, *_ = people(world)
    mine = world.tweets.post(rita, "my own", None, [])
    for target_type, target in (("user", rita), ("tweet", int(mine.id))):
        with pytest.raises(ValidationFailed) as refused:
            world.reports.report(rita, target_type, target, "spam", None)
        assert refused.value.details[0].field == "target_id"
    assert world.report_store.reports == {}


def test_unknown_targets_are_404(world: World):
    rita, *_ = people(world)
    for target_type in ("user", "tweet"):
        with pytest.raises(NotFound):
            world.reports.report(rita, target_type, 999_999, "spam", None)
        with pytest.raises(NotFound):  # an id past 2**63 - 1 names nothing
            world.reports.report(rita, target_type, None, "spam", None)


@pytest.mark.parametrize(
    ("field", "args"),
    [
        ("target_type", ("post", "spam", None)),
        ("reason", ("user", "rude", None)),
        ("comment", ("user", "spam", "x" * 1001)),
    ],
)
def test_bad_fields_are_400_and_write_nothing(world: World, field: str, args: tuple):
    rita, aldo, _ = people(world)
    target_type, reason, comment = args
    with pytest.raises(ValidationFailed) as refused:
        world.reports.report(rita, target_type, aldo, reason, comment)
    assert refused.value.details[0].field == field
    assert world.report_store.reports == {}


def test_the_snapshot_is_taken_at_the_first_report_and_outlives_the_tweet(world: World):
    rita, aldo, mod = people(world)
    other = world.user()
    media_id = world.ready_media(aldo, alt_text="a cat")
    tweet = world.tweets.post(aldo, "look #cats", None, [media_id])
    world.reports.report(rita, "tweet", int(tweet.id), "spam", None)
    world.reports.report(other, "tweet", int(tweet.id), "abuse", None)
    world.tweets.delete(aldo, int(tweet.id))
    with pytest.raises(NotFound):  # a deleted tweet is reported no more; its case keeps it
        world.reports.report(world.user(), "tweet", int(tweet.id), "spam", None)
    [case] = world.reports.cases(mod, "open", 20, None).items
    assert case.snapshot.text == "look #cats"
    assert [m.id for m in case.snapshot.media] == [media_id]
    assert case.snapshot.media[0].alt_text == "a cat"
    assert (case.subject.id, case.subject.username) == (str(aldo), "aldo")
    assert (case.reporter_count, case.reasons) == (2, {"spam": 1, "abuse": 1})


def test_a_user_report_snapshots_the_profile(world: World):
    rita, aldo, mod = people(world)
    world.profiles.users[aldo].update(display_name="Aldo!", bio="buy now")
    world.reports.report(rita, "user", aldo, "spam", None)
    [case] = world.reports.cases(mod, "open", 20, None).items
    assert (case.snapshot.display_name, case.snapshot.bio) == ("Aldo!", "buy now")
    assert case.target_type == "user" and case.target_id == str(aldo)


def test_cases_are_for_moderators_only(world: World):
    rita, aldo, mod = people(world)
    world.reports.report(rita, "user", aldo, "spam", None)
    with pytest.raises(Forbidden):
        world.reports.cases(rita, "open", 20, None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    with pytest.raises(Forbidden):
        world.reports.resolve(rita, case_id, "dismiss", None)
    assert world.reports.cases(mod, "open", 20, None).items[0].status == "open"


def test_open_cases_most_reporters_first_then_oldest_paged(world: World):
    mod = world.user("warble_admin")
    quiet_old, loud, quiet_new = world.user(), world.user(), world.user()
    reporters = [world.user() for _ in range(3)]
    world.reports.report(reporters[0], "user", quiet_old, "spam", None)
    for r in reporters:
        world.reports.report(r, "user", loud, "hate", None)
    world.reports.report(reporters[1], "user", quiet_new, "spam", None)
    first = world.reports.cases(mod, "open", 2, None)
    assert [c.target_id for c in first.items] == [str(loud), str(quiet_old)]
    assert first.next_cursor is not None
    rest = world.reports.cases(mod, "open", 2, first.next_cursor)
    assert [c.target_id for c in rest.items] == [str(quiet_new)]
    assert rest.next_cursor is None


def test_dismiss_closes_the_case_and_dismisses_its_reports(world: World):
    rita, aldo, mod = people(world)
    world.reports.report(rita, "user", aldo, "spam", None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    case = world.reports.resolve(mod, case_id, "dismiss", "fine")
    assert (case.status, case.action, case.note) == ("closed", "dismiss", "fine")
    assert case.closed_at is not None
    [mine] = world.reports.mine(rita, 20, None).items
    assert mine.status == "dismissed" and mine.resolved_at == case.closed_at
    assert world.reports.cases(mod, "open", 20, None).items == []
    assert [c.id for c in world.reports.cases(mod, "closed", 20, None).items] == [str(case_id)]
    with pytest.raises(Conflict):
        world.reports.resolve(mod, case_id, "remove", None)


def test_a_report_of_a_target_whose_case_closed_opens_a_new_case(world: World):
    rita, aldo, mod = people(world)
    world.reports.report(rita, "user", aldo, "spam", None)
    first = world.reports.cases(mod, "open", 20, None).items[0]
    world.reports.resolve(mod, int(first.id), "dismiss", None)
    _, made = world.reports.report(rita, "user", aldo, "abuse", None)
    assert made
    [second] = world.reports.cases(mod, "open", 20, None).items
    assert second.id != first.id and second.reasons == {"abuse": 1}


def test_remove_deletes_the_tweet_as_its_authors_delete_does(world: World):
    rita, aldo, mod = people(world)
    tweet = world.tweets.post(aldo, "spam spam", None, [])
    world.reports.report(rita, "tweet", int(tweet.id), "spam", None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    case = world.reports.resolve(mod, case_id, "remove", None)
    assert case.action == "remove"
    assert world.tweets.load_one(int(tweet.id)) is None
    assert world.reports.mine(rita, 20, None).items[0].status == "actioned"


def test_remove_of_a_user_is_400_and_leaves_the_case_open(world: World):
    rita, aldo, mod = people(world)
    world.reports.report(rita, "user", aldo, "spam", None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    with pytest.raises(ValidationFailed):
        world.reports.resolve(mod, case_id, "remove", None)
    assert world.reports.cases(mod, "open", 20, None).items[0].status == "open"


def test_suspend_suspends_the_subject_and_ends_their_sessions(world: World):
    rita, aldo, mod = people(world)
    ended = FakeSessionEnder()
    world.container.__dict__["accounts"] = ended  # the accounts service is no unit-tier one
    tweet = world.tweets.post(aldo, "threats", None, [])
    world.reports.report(rita, "tweet", int(tweet.id), "violence", None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    case = world.reports.resolve(mod, case_id, "suspend", "threats")
    account = world.suspension_store.account(aldo)
    assert account is not None and account.suspended and ended.ended == [aldo]
    assert case.action == "suspend" and case.subject.id == str(aldo)
    assert world.tweets.load_one(int(tweet.id)) is not None  # suspending removes nothing
    assert world.reports.mine(rita, 20, None).items[0].status == "actioned"


def test_a_failing_action_leaves_the_case_open(world: World):
    rita, _, mod = people(world)
    world.reports.report(rita, "user", mod, "spam", None)  # an admin cannot be suspended
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    with pytest.raises(ValidationFailed):
        world.reports.resolve(mod, case_id, "suspend", None)
    assert world.reports.cases(mod, "open", 20, None).items[0].status == "open"


def test_an_unknown_case_is_404(world: World):
    _, _, mod = people(world)
    with pytest.raises(NotFound):
        world.reports.resolve(mod, 12345, "dismiss", None)


def test_closed_cases_go_after_the_retention(world: World):
    rita, aldo, mod = people(world)
    world.reports.report(rita, "user", aldo, "spam", None)
    case_id = int(world.reports.cases(mod, "open", 20, None).items[0].id)
    world.reports.resolve(mod, case_id, "dismiss", None)
    closed_at = world.report_store.cases[case_id].closed_at_ms or 0
    day = 86_400_000
    assert world.reports.purge(closed_at + 89 * day) == 0
    assert world.reports.purge(closed_at + 91 * day) == 1
    assert world.report_store.cases == {} and world.reports.mine(rita, 20, None).items == []


def test_my_reports_newest_first_paged(world: World):
    rita, *_ = people(world)
    targets = [world.user() for _ in range(3)]
    for target in targets:
        world.reports.report(rita, "user", target, "spam", None)
    first = world.reports.mine(rita, 2, None)
    assert [r.target_id for r in first.items] == [str(targets[2]), str(targets[1])]
    rest = world.reports.mine(rita, 2, first.next_cursor)
    assert [r.target_id for r in rest.items] == [str(targets[0])]
