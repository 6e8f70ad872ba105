"""Suspensions against real PostgreSQL, Redis and moto (API.md "Reports and moderation",
docs/moderation.md "Suspensions"): the column and what derives from it: sessions ended, login
refused, the profile gone from every read, the tweets gone from home, hashtag pages, replies
and search, direct messages refused; all of it back after the lift, with counters intact."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from warble import keys, services
from warble.domain.accounts.answers import Principal
from warble.domain.accounts.ports import UnknownUser
from warble.errors import (
    AccountSuspended,
    Forbidden,
    NotAllowed,
    NotFound,
    Unauthorized,
    ValidationFailed,
)
from warble.events import TweetPosted

from tests.integration.test_blocks import PASSWORD, World

pytestmark = [pytest.mark.integration, pytest.mark.redis]

ADMIN = "warble_admin"


@pytest.fixture
def admins(monkeypatch) -> None:
    monkeypatch.setenv("ADMIN_USERNAMES", ADMIN)


@pytest.fixture
def world(admins, accounts, moto, redis) -> Iterator[World]:
    yield World()


@pytest.fixture
def moderator(world) -> Principal:
    admin_id, _ = services.accounts().create_admin(ADMIN, "ops@example.com", PASSWORD)
    return Principal(admin_id, session_id=0)


def _home(viewer: int) -> list[str]:
    return [t.text for t in services.timelines().home(viewer, 20, None).items]


def test_a_suspension_ends_sessions_refuses_login_and_hides_the_profile(
    world, moderator, pg, redis
):
    # given alice with two sessions and a cached profile
    alice = world.user("alice")
    accounts = services.accounts()
    phone = accounts.login("alice", PASSWORD, "phone")
    laptop = accounts.login("alice@example.com", PASSWORD, "laptop")
    accounts.require_token(phone.token)
    assert accounts.profile(alice)["username"] == "alice"
    assert redis.get(keys.profile(alice).value) is not None
    # when a moderator suspends her
    assert services.suspensions().suspend(moderator.user_id, alice).suspended is True
    # then the column is set, every token refused, login refused, the profile gone
    row = pg.execute("SELECT suspended_at FROM users WHERE id = %s", (alice,)).fetchone()
    assert row is not None and row[0] is not None
    for issued in (phone, laptop):
        with pytest.raises(Unauthorized):
            accounts.require_token(issued.token)
    with pytest.raises(AccountSuspended) as refused:
        accounts.login("alice", PASSWORD, "tablet")
    assert (refused.value.status, refused.value.code) == (403, "account_suspended")
    with pytest.raises(NotFound):
        accounts.profile(alice)
    with pytest.raises(NotFound):
        accounts.profile_by_username("ALICE")
    assert accounts.profiles([alice, moderator.user_id]).keys() == {moderator.user_id}
    # the read cached a stand-in without a profile: the pages leaving her tweets out read no
    # database for her (nothing of her profile in it)
    cached = redis.get(keys.profile(alice).value)
    assert cached is not None and json.loads(cached) == {"id": alice, "suspended": True}
    # a second suspension is the same answer
    assert services.suspensions().suspend(moderator.user_id, alice).suspended is True
    # when it is lifted: login works again, the profile is back (the old tokens stay ended)
    assert services.suspensions().lift(moderator.user_id, alice).suspended is False
    assert accounts.profile(alice)["username"] == "alice"
    assert accounts.require_token(accounts.login("alice", PASSWORD, "tablet").token)
    with pytest.raises(Unauthorized):
        accounts.require_token(phone.token)


def test_a_wrong_password_says_nothing_of_a_suspension(world, moderator):
    alice = world.user("alice")
    services.suspensions().suspend(moderator.user_id, alice)
    from warble.errors import InvalidCredentials

    with pytest.raises(InvalidCredentials):
        services.accounts().login("alice", "wrong-password", "")


def test_no_session_opens_for_a_suspended_account(world, moderator):
    """A login that checked the password before the suspension committed opens no session
    after it: the session's INSERT reads the column (under a share lock)."""
    alice = world.user("alice")
    services.suspensions().suspend(moderator.user_id, alice)
    store = services.container().stores.sessions()
    from datetime import UTC, datetime, timedelta

    with pytest.raises(UnknownUser):
        store.insert(services.ids().next_id(), alice, b"h" * 32, "", datetime.now(UTC)
                     + timedelta(days=1))  # fmt: skip
    assert store.live_for_user(alice) == []


def test_only_moderators_suspend_admins_cannot_be_and_unknown_users_are_404(world, moderator):
    alice, mallory = world.user("alice"), world.user("mallory")
    suspensions = services.suspensions()
    with pytest.raises(Forbidden):
        suspensions.suspend(mallory, alice)
    with pytest.raises(ValidationFailed):
        suspensions.suspend(moderator.user_id, moderator.user_id)
    with pytest.raises(NotFound):
        suspensions.suspend(moderator.user_id, 123456789)
    assert services.accounts().profile(alice)["username"] == "alice"


def test_tweets_leave_home_hashtag_page_replies_and_search_and_come_back(world, moderator):
    # given: bob follows alice and carol; carol retweeted alice, alice replied to carol
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    tweets, tag = services.tweets(), f"t{uuid.uuid4().hex[:8]}"
    graph = services.graph()
    graph.follow(bob, alice)
    graph.follow(bob, carol)
    world.settle()
    carols = tweets.post(carol, f"carol's #{tag}", None, [])
    alices = tweets.post(alice, f"alice's #{tag}", None, [])
    tweets.retweet(carol, int(alices.id))
    tweets.post(alice, "alice replies", int(carols.id), [])
    services.likes().like(bob, int(alices.id))
    world.settle()
    services.hashtags().tweets_changed(
        [TweetPosted(tweet_id=int(t.id), author_id=int(t.author.id), hashtags=(tag,))
         for t in (carols, alices)]
    )  # fmt: skip
    home = _home(bob)
    assert len(home) == 4
    assert [u.username for u in services.search().people(bob, "alice", 10, None).items] == ["alice"]
    # when alice is suspended
    services.suspensions().suspend(moderator.user_id, alice)
    # then on everyone's next read
    assert _home(bob) == [carols.text]
    assert _home(carol) == [carols.text]
    page = services.hashtags().timeline(bob, tag, 20, None)
    assert [t.id for t in page.items] == [carols.id]
    assert tweets.replies(bob, int(carols.id), 20, None).items == []
    assert services.search().people(bob, "alice", 10, None).items == []
    # carol's own timeline keeps her tweet, not her retweet of alice's
    assert [t.id for t in tweets.user_timeline(bob, carol, 20, None).items] == [carols.id]
    for read in (
        lambda: tweets.get(bob, int(alices.id)),
        lambda: tweets.user_timeline(bob, alice, 20, None),
        lambda: services.likes().like(carol, int(alices.id)),
        lambda: tweets.retweet(bob, int(alices.id)),
        lambda: graph.follow(carol, alice),
        lambda: graph.user(bob, alice),
        lambda: graph.following(bob, alice, 20, None),
    ):
        with pytest.raises(NotFound):
            read()
    # when the suspension is lifted: everything is back, follows and counters intact
    services.suspensions().lift(moderator.user_id, alice)
    assert _home(bob) == home
    back = tweets.get(bob, int(alices.id))
    assert (back.like_count, back.retweet_count, back.liked_by_me) == (1, 1, True)
    assert graph.counts([alice])[alice]["followers_count"] == 1
    assert graph.user(bob, alice).relationship == "following"
    assert len(tweets.user_timeline(bob, carol, 20, None).items) == 2
    assert [t.id for t in services.hashtags().timeline(bob, tag, 20, None).items] == [
        alices.id,
        carols.id,
    ]


def test_messages_to_a_suspended_user_are_not_allowed(world, moderator):
    alice, bob = world.user("alice"), world.user("bob")
    graph = services.graph()
    graph.follow(alice, bob)
    graph.follow(bob, alice)
    world.settle()
    conversations = services.conversations()
    conversation, _ = conversations.open(alice, bob)
    conversation_id = int(conversation.id)
    conversations.send(alice, conversation_id, "hi")
    services.suspensions().suspend(moderator.user_id, bob)
    with pytest.raises(NotAllowed):
        conversations.send(alice, conversation_id, "still there?")
    services.suspensions().lift(moderator.user_id, bob)
    assert conversations.send(alice, conversation_id, "welcome back").created


def test_a_suspended_account_can_still_be_deleted(world, moderator, pg):
    alice = world.user("alice")
    services.suspensions().suspend(moderator.user_id, alice)
    services.accounts().delete_account(Principal(alice, 0), PASSWORD)
    assert pg.execute("SELECT 1 FROM users WHERE id = %s", (alice,)).fetchone() is None
    with pytest.raises(NotFound):
        services.suspensions().lift(moderator.user_id, alice)


def test_suspensions_work_as_the_functions_roles(world, moderator, monkeypatch):
    """AccountsFunction (warble_accounts) suspends, ends sessions, lifts and logs in; every other
    function (warble_reader) reads profiles that leave the suspended out."""
    alice = world.user("alice")
    monkeypatch.setenv("DB_USER", "warble_accounts")
    services.reset()
    services.suspensions().suspend(moderator.user_id, alice)
    with pytest.raises(AccountSuspended):
        services.accounts().login("alice", PASSWORD, "")
    monkeypatch.setenv("DB_USER", "warble_reader")
    services.reset()
    with pytest.raises(NotFound):
        services.accounts().profile(alice)
    monkeypatch.setenv("DB_USER", "warble_accounts")
    services.reset()
    services.suspensions().lift(moderator.user_id, alice)
    assert services.accounts().login("alice", PASSWORD, "").user["id"] == alice
