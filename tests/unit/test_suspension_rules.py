"""Suspensions' rules (API.md "Reports and moderation", docs/moderation.md "Suspensions"): who
may suspend whom, what a suspension and its lift do, and how a suspended author's tweets leave
what others read and come back, on the unit tier's World (the production builders on in-memory
stores: a suspended account has no profile, as ``warble.dal.accounts`` reads none)."""

from __future__ import annotations

import pytest
from warble import keys
from warble.domain.accounts.answers import Principal
from warble.domain.suspensions.answers import Suspension
from warble.domain.suspensions.service import SuspensionService
from warble.errors import Forbidden, NotFound, ValidationFailed

from tests.unit.fakes import FakeCache, FakeSessionEnder, World

pytestmark = pytest.mark.unit

MODERATOR = "the_mod"


@pytest.fixture
def ended() -> FakeSessionEnder:
    return FakeSessionEnder()


@pytest.fixture
def suspensions(world: World, ended: FakeSessionEnder) -> SuspensionService:
    """The service as ``warble.services.suspensions`` builds it, with a recording session end
    (the accounts service is no unit-tier service) and the World's profile keys."""
    return SuspensionService(
        store=world.suspension_store,
        sessions=ended,
        profiles=FakeCache(keys.profile, world.keyspace),
        moderators=frozenset({MODERATOR}),
    )


@pytest.fixture
def moderator(world: World) -> Principal:
    return Principal(world.user(MODERATOR), session_id=1)


# ---- who may suspend whom ---------------------------------------------------------------------
def test_a_moderator_suspends_and_lifts_idempotently(
    world: World, suspensions: SuspensionService, moderator: Principal, ended: FakeSessionEnder
):
    # given an account with a cached profile
    alice = world.user()
    world.keyspace.values[keys.profile(alice).value] = '{"id": 1}'
    # when a moderator suspends it, twice
    assert suspensions.suspend(moderator.user_id, alice) == Suspension(suspended=True)
    assert suspensions.suspend(moderator.user_id, alice) == Suspension(suspended=True)
    # then it is suspended, its sessions ended (each time: a retry finishes a failed first)
    # and its cached profile dropped
    assert alice in world.suspension_store.suspended
    assert ended.ended == [alice, alice]
    assert keys.profile(alice).value not in world.keyspace.values
    # when the suspension is lifted, twice: the account is back
    assert suspensions.lift(moderator.user_id, alice) == Suspension(suspended=False)
    assert suspensions.lift(moderator.user_id, alice) == Suspension(suspended=False)
    assert world.suspension_store.suspended == {}
    assert world.profiles.profile(alice)["id"] == alice


def test_anyone_but_a_moderator_is_forbidden_and_changes_nothing(
    world: World, suspensions: SuspensionService, ended: FakeSessionEnder
):
    alice, mallory = world.user(), world.user()
    with pytest.raises(Forbidden):
        suspensions.suspend(mallory, alice)
    with pytest.raises(Forbidden):
        suspensions.lift(mallory, alice)
    assert world.suspension_store.suspended == {}
    assert ended.ended == []


def test_an_unknown_account_is_not_found(
    world: World, suspensions: SuspensionService, moderator: Principal
):
    with pytest.raises(NotFound):
        suspensions.suspend(moderator.user_id, 424242)
    with pytest.raises(NotFound):
        suspensions.lift(moderator.user_id, 424242)


def test_an_admin_cannot_be_suspended(
    world: World, suspensions: SuspensionService, moderator: Principal, ended: FakeSessionEnder
):
    with pytest.raises(ValidationFailed) as refused:
        suspensions.suspend(moderator.user_id, moderator.user_id)
    assert refused.value.details[0].field == "user_id"
    assert world.suspension_store.suspended == {}
    assert ended.ended == []


def test_a_suspended_account_can_still_be_lifted_and_is_found_by_the_moderator(
    world: World, suspensions: SuspensionService, moderator: Principal
):
    alice = world.user()
    suspensions.suspend(moderator.user_id, alice)
    # no profile for anyone, but the moderator's store still knows the account
    with pytest.raises(NotFound):
        world.profiles.profile(alice)
    assert suspensions.suspend(moderator.user_id, alice).suspended is True
    assert suspensions.lift(moderator.user_id, alice).suspended is False


# ---- what others read -------------------------------------------------------------------------
def follow(world: World, follower: int, followee: int) -> None:
    world.follow(follower, followee)
    world.timelines.followed(follower, followee)


def tweet(world: World, author: int, text: str, reply_to: int | None = None) -> int:
    tweet_id = int(world.tweets.post(author, text, reply_to, []).id)
    world.timelines.tweet_created(author, tweet_id)
    return tweet_id


def home_ids(world: World, viewer: int) -> list[int]:
    return [int(t.id) for t in world.timelines.home(viewer, 50, None).items]


def test_a_suspended_authors_tweets_and_retweets_of_them_leave_and_come_back(
    world: World, suspensions: SuspensionService, moderator: Principal
):
    # given: bob follows alice and carol; carol retweeted alice; alice replied to carol
    alice, carol, bob = world.user(), world.user(), world.user()
    follow(world, bob, alice)
    follow(world, bob, carol)
    carols = tweet(world, carol, "carol here")
    alices = tweet(world, alice, "alice here")
    reply = tweet(world, alice, "a reply", reply_to=carols)
    retweet = int(world.tweets.retweet(carol, alices)[0].id)
    world.timelines.tweet_created(carol, retweet)
    before = home_ids(world, bob)
    assert set(before) == {carols, alices, reply, retweet}
    # when alice is suspended
    suspensions.suspend(moderator.user_id, alice)
    # then her tweets, her reply and carol's retweet of her leave bob's home and the replies
    assert home_ids(world, bob) == [carols]
    assert world.tweets.replies(bob, carols, 50, None).items == []
    with pytest.raises(NotFound):
        world.tweets.get(bob, alices)
    # when the suspension is lifted, all of it is back (nothing was rewritten)
    suspensions.lift(moderator.user_id, alice)
    assert home_ids(world, bob) == before
    assert [t.id for t in world.tweets.replies(bob, carols, 50, None).items] == [str(reply)]
    assert world.tweets.get(bob, alices).id == str(alices)


def test_a_suspended_authors_tweets_cannot_be_liked_retweeted_or_replied_to(
    world: World, suspensions: SuspensionService, moderator: Principal
):
    alice, carol, bob = world.user(), world.user(), world.user()
    alices = tweet(world, alice, "alice here")
    retweet = int(world.tweets.retweet(carol, alices)[0].id)
    suspensions.suspend(moderator.user_id, alice)
    for tweet_id in (alices, retweet):  # a retweet stands for its original
        with pytest.raises(NotFound):
            world.likes.like(bob, tweet_id)
        with pytest.raises(NotFound):
            world.tweets.retweet(bob, tweet_id)
        with pytest.raises(NotFound):
            world.tweets.post(bob, "hi", tweet_id, [])
        with pytest.raises(NotFound):
            world.tweets.replies(bob, tweet_id, 20, None)
    with pytest.raises(NotFound):
        world.tweets.user_timeline(bob, alice, 20, None)
    suspensions.lift(moderator.user_id, alice)
    assert world.likes.like(bob, alices) is True


# ---- the cached stand-in ----------------------------------------------------------------------
def test_a_suspended_rows_cached_record_is_a_stand_in_read_as_no_profile():
    from datetime import UTC, datetime

    from warble.domain.accounts.service import profile_record, shown

    row = {
        "id": 7,
        "username": "alice",
        "email": "alice@example.com",
        "display_name": "Alice",
        "bio": "",
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "suspended": False,
    }
    record = profile_record(row)
    assert shown(record) and "suspended" not in record and record["username"] == "alice"
    stand_in = profile_record({**row, "suspended": True})
    # nothing of the profile is kept while suspended: only what says it is not shown
    assert stand_in == {"id": 7, "suspended": True}
    assert not shown(stand_in) and not shown(None)
