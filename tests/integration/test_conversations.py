"""Direct messages against real moto (DynamoDB), PostgreSQL and Redis: the permission rule
(friends, matched, neither), one conversation per pair, unread counts and the ``dm_unread``
hash, resends with the same client_id, history order and cursors."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from warble import keys, services
from warble.dal.conversations import ConversationItem, ConversationStore, member_key
from warble.dal.dm_unread import UnreadMessageCache
from warble.domain.conversations.service import ConversationService
from warble.errors import NotAllowed, NotFound, ValidationFailed
from warble.settings import get_settings

pytestmark = pytest.mark.integration


@pytest.fixture
def dms(accounts, moto, pg) -> Iterator[ConversationService]:
    yield services.conversations()


@pytest.fixture
def make_users(pg):
    def make(n: int) -> list[int]:
        ids = [random.randrange(1 << 40, 1 << 62) for _ in range(n)]
        with pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO users (id, username, email, password_hash, display_name)"
                " VALUES (%s, %s, %s, 'x', %s)",
                [(uid, f"u{uid % 10**12}", f"u{uid}@example.com", f"User {uid}") for uid in ids],
            )
        return ids

    return make


def befriend(a: int, b: int) -> None:
    services.graph().follow(a, b)
    services.graph().follow(b, a)


def _conversation(dms: ConversationService, a: int, b: int) -> int:
    body, _ = dms.open(a, b)
    return int(body.id)


# ---- the permission rule ----------------------------------------------------------------------
def test_friends_may_open_and_send(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    body, created = dms.open(a, b)
    assert created is True
    assert sorted(p.id for p in body.participants) == sorted([str(a), str(b)])
    assert body.last_message is None and body.unread_count == 0
    again, created_again = dms.open(b, a)
    assert created_again is False and again.id == body.id  # one per pair, either side
    sent = dms.send(a, int(body.id), "hi")
    assert sent.created and sent.view().text == "hi"


def test_matched_users_may_converse(dms, make_users):
    a, b = make_users(2)
    with pytest.raises(NotAllowed):
        dms.open(a, b)
    conversation = dms.match(a, b)  # what Discover calls on a match
    assert dms.match(b, a) == conversation  # idempotent, one conversation
    body, created = dms.open(b, a)
    assert created is False and int(body.id) == conversation
    assert dms.send(b, conversation, "we matched").created


@pytest.mark.parametrize("one_way", [False, True])
def test_neither_friends_nor_matched_is_not_allowed(dms, make_users, one_way):
    a, b = make_users(2)
    if one_way:
        services.graph().follow(a, b)  # following is not enough: friends follow each other
    with pytest.raises(NotAllowed) as refused:
        dms.open(a, b)
    assert refused.value.status == 403 and refused.value.code == "not_allowed"


def test_unfriending_stops_new_messages_but_keeps_history(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    conversation = _conversation(dms, a, b)
    dms.send(a, conversation, "before")
    services.graph().unfollow(b, a)
    with pytest.raises(NotAllowed):
        dms.send(a, conversation, "after")
    assert [m.text for m in dms.history(b, conversation, 20, None).items] == ["before"]


def test_self_unknown_and_outsiders(dms, make_users):
    a, b, c = make_users(3)
    with pytest.raises(ValidationFailed):
        dms.open(a, a)
    with pytest.raises(NotFound):
        dms.open(a, random.randrange(1 << 40, 1 << 62))
    befriend(a, b)
    befriend(a, c)
    conversation = _conversation(dms, a, b)
    for call in (
        lambda: dms.history(c, conversation, 20, None),
        lambda: dms.send(c, conversation, "let me in"),
        lambda: dms.read(c, conversation),
        lambda: dms.conversation(c, conversation),
    ):
        with pytest.raises(NotFound):
            call()


def test_racing_opens_make_one_conversation(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    answers: list[Any] = []
    start = threading.Barrier(4)

    def open_it(me: int, other: int) -> None:
        start.wait()
        answers.append(dms.open(me, other))

    threads = [threading.Thread(target=open_it, args=p) for p in [(a, b), (b, a)] * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({body.id for body, _ in answers}) == 1
    assert sum(created for _, created in answers) == 1


# ---- unread counts ----------------------------------------------------------------------------
def test_unread_counts_follow_sends_and_reads(dms, make_users, redis):
    a, b, c = make_users(3)
    befriend(a, b)
    befriend(c, b)
    ab = _conversation(dms, a, b)
    cb = _conversation(dms, c, b)
    assert dms.unread_counts(b) == {}  # builds the hash: marker only
    for text in ("one", "two", "three"):
        dms.send(a, ab, text)
    dms.send(c, cb, "hey")
    # my own messages never count
    assert dms.unread_counts(a) == {}
    assert dms.unread_counts(b) == {ab: 3, cb: 1}
    # the seam the notifications feature reads: the sum of HVALS
    assert sum(int(v) for v in redis.hvals(keys.dm_unread(b))) == 4
    listed = {item.id: item for item in dms.latest(b, 20, None).items}
    assert listed[str(ab)].unread_count == 3 and listed[str(cb)].unread_count == 1
    assert listed[str(ab)].last_message.text == "three"

    dms.read(b, ab)
    assert dms.unread_counts(b) == {cb: 1}
    assert dms.conversation(b, ab).unread_count == 0
    # replying reads the conversation for its sender
    dms.send(b, cb, "hello back")
    assert dms.unread_counts(b) == {}
    assert dms.unread_counts(c) == {cb: 1}


def test_missing_hash_is_rebuilt_from_the_memberships(dms, make_users, redis):
    a, b = make_users(2)
    befriend(a, b)
    ab = _conversation(dms, a, b)
    dms.send(a, ab, "one")
    dms.send(a, ab, "two")
    redis.delete(keys.dm_unread(b))  # eviction, a lost node
    dms.send(a, ab, "three")  # not counted into a missing hash (it would look built)
    assert not redis.exists(keys.dm_unread(b))
    assert dms.unread_counts(b) == {ab: 3}
    assert redis.hgetall(keys.dm_unread(b)) == {"built": "0", str(ab): "3"}


def test_read_all_reads_every_conversation_durably(dms, make_users, redis):
    a, b, c = make_users(3)
    befriend(a, b)
    befriend(c, b)
    ab, cb = _conversation(dms, a, b), _conversation(dms, c, b)
    dms.send(a, ab, "x")
    dms.send(c, cb, "y")
    dms.send(c, cb, "z")
    dms.read_all(b)
    assert dms.unread_counts(b) == {}
    redis.delete(keys.dm_unread(b))  # the durable read positions say the same
    assert dms.unread_counts(b) == {}
    item = ConversationItem.get(*member_key(b, cb), consistent_read=True)
    assert item.unread == 0 and item.last_read == item.last_id


def test_concurrent_sends_are_all_counted_and_in_id_order(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    ab = _conversation(dms, a, b)
    start = threading.Barrier(6)

    def send(n: int) -> None:
        start.wait()
        for i in range(5):
            dms.send(a if n % 2 else b, ab, f"{n}-{i}")

    threads = [threading.Thread(target=send, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history = dms.history(a, ab, 100, None).items
    assert len(history) == 30
    ids = [int(m.id) for m in history]
    assert ids == sorted(ids, reverse=True)
    newest = dms.conversation(a, ab).last_message
    assert newest.id == history[0].id
    # the memberships agree with the history: b's unread are a's messages since b last sent
    unread_b = 0
    for message in history:
        if message.sender_id == str(b):
            break
        unread_b += 1
    assert dms.conversation(b, ab).unread_count == unread_b


# ---- resends and history ----------------------------------------------------------------------
def test_resend_with_the_same_client_id_answers_the_first_message(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    ab = _conversation(dms, a, b)
    first = dms.send(a, ab, "only once", client_id="c-1")
    again = dms.send(a, ab, "only once", client_id="c-1")
    assert first.created and not again.created
    assert again.message == first.message
    other = dms.send(b, ab, "same client id, other sender", client_id="c-1")
    assert other.created  # a client_id is the sender's own
    assert len(dms.history(a, ab, 20, None).items) == 2
    assert dms.unread_counts(b) == {}  # sending read it for b


def test_history_pages_newest_first_without_repeats(dms, make_users):
    a, b = make_users(2)
    befriend(a, b)
    ab = _conversation(dms, a, b)
    for i in range(7):
        dms.send(a, ab, f"m{i}")
    seen: list[str] = []
    cursor = None
    while True:
        page = dms.history(b, ab, 3, cursor)
        seen += [m.text for m in page.items]
        if page.next_cursor is None:
            break
        dms.send(b, ab, "written between pages")  # newer: never on a later page
        cursor = page.next_cursor
    assert seen == [f"m{i}" for i in reversed(range(7))]
    with pytest.raises(ValidationFailed):
        dms.history(b, ab, 3, "bm90LWEtY3Vyc29y")


def test_list_is_latest_activity_first_with_cursor(dms, make_users):
    me, *others = make_users(4)
    ids = []
    for other in others:
        befriend(me, other)
        ids.append(_conversation(dms, me, other))
    dms.send(others[0], ids[0], "oldest conversation, newest message")
    first = dms.latest(me, 2, None)
    assert [c.id for c in first.items] == [str(ids[0]), str(ids[2])]
    rest = dms.latest(me, 2, first.next_cursor)
    assert [c.id for c in rest.items] == [str(ids[1])] and rest.next_cursor is None


# ---- the ``message`` unread count (API.md: from a new user's first message on) ---------------
def _message_count(user_id: int) -> int:
    return services.notifications().counts(user_id).message


@pytest.mark.redis  # also on the cluster
def test_message_count_rises_from_a_new_users_first_message(dms, make_users, redis):
    # Nothing has read b's unread messages before: no dm_unread hash exists yet.
    a, b, c = make_users(3)
    befriend(a, b)
    befriend(c, b)
    ab, cb = _conversation(dms, a, b), _conversation(dms, c, b)
    dms.send(a, ab, "one")
    dms.send(a, ab, "two")
    counts = services.notifications().counts(b)
    assert counts.message == 2 and counts.total >= 2
    dms.send(c, cb, "three")  # the hash is built now: a message raises it
    assert _message_count(b) == 3

    dms.read(b, ab)
    assert _message_count(b) == 1
    services.notifications().mark_read(b, ["message"])  # {"all": true} includes messages
    assert _message_count(b) == 0
    dms.send(a, ab, "four")
    assert _message_count(b) == 1

    redis.flushdb()  # a flushed Redis
    assert _message_count(b) == 1
    dms.send(c, cb, "five")
    assert _message_count(b) == 2


@pytest.mark.redis  # also on the cluster
def test_a_rebuild_that_read_before_a_message_does_not_store_its_stale_answer(
    dms, make_users, redis
):
    a, b = make_users(2)
    befriend(a, b)
    ab = _conversation(dms, a, b)
    dms.send(a, ab, "one")
    cache = UnreadMessageCache(services.container().redis)
    store = ConversationStore(get_settings())

    def load_then_a_message_lands() -> dict[int, int]:
        read = {m.conversation_id: m.unread for m in store.all_memberships(b)}
        dms.send(a, ab, "two")  # commits and counts after the rebuild's read
        return read

    assert cache.rebuild(b, load_then_a_message_lands) == {ab: 1}  # answers what it read
    assert not redis.exists(keys.dm_unread(b))  # but stores nothing stale
    assert _message_count(b) == 2
