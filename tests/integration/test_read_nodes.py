"""How many cache nodes a home read and an unread poll touch (issue 41): the reader's own part (its
timeline, read position, celebrity list, blocks and mutes, session) is one slot, every followed
celebrity's set is on the celebrities' one slot, and the system list is a third; whatever the
reader follows, that is three slots, so at most three nodes on any cluster. The page's tweets,
their counts and their authors' profiles are read beside them, bounded by the page (20 tweets),
not by the follows.

Counted from what a Redis server of the test's own saw (MONITOR, with the server naming each
command's keys: COMMAND GETKEYS), so every command counts, the scripts' and the batches' alike.
Slots rather than nodes: at most three slots is at most three nodes on a cluster of any size,
where a 3-node local cluster would hold any three."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator

import pytest
import redis as redis_lib
from redis.crc import key_slot
from warble import keys, services
from warble.settings import get_settings

from tests.conftest import redis_pointed_at
from tests.integration.test_notifications import configure, user
from tests.support.redis_server import RedisServer
from tests.support.streams import StreamTap

pytestmark = pytest.mark.integration

_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
_STOP = "read-nodes:stop"


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    private = RedisServer()  # MONITOR sees only this test's commands
    private.start()
    yield private
    private.stop()


class Seen:
    """The keys of every command the server ran while recording (scripts' inner calls aside:
    they run on their script's slot)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._client = redis_lib.Redis.from_url(url, decode_responses=True)
        self._monitor = self._client.monitor()
        self._monitor.__enter__()
        self.commands: list[list[str]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        connection = self._monitor.connection
        while True:
            line = str(connection.read_response())
            if _STOP in line:
                return
            if "[0 lua]" in line or " [" not in line:
                continue
            args = [re.sub(r"\\(.)", r"\1", a) for a in _ARG.findall(line)]
            if args and args[0].upper() not in {"MONITOR", "PING", "CLIENT", "SCRIPT", "ECHO"}:
                self.commands.append(args)

    def stop(self) -> set[str]:
        """Stop recording; the keys the recorded commands named."""
        other = redis_lib.Redis.from_url(self._url, decode_responses=True)
        other.echo(_STOP)
        self._thread.join(10)
        self._monitor.__exit__(None, None, None)
        named: set[str] = set()
        for command in self.commands:
            with contextlib.suppress(redis_lib.ResponseError):  # a command without keys
                named.update(str(k) for k in other.execute_command("COMMAND GETKEYS", *command))
        other.close()
        self._client.close()
        return named


def _tag(key: str) -> str:
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1 : end] if start >= 0 and end > start + 1 else key


@pytest.fixture
def world(server, accounts, moto, monkeypatch):
    with redis_pointed_at(server.url, cluster=False):
        redis_lib.Redis.from_url(server.url).flushall()
        configure(monkeypatch, CELEBRITY_FOLLOWERS="1")
        s = get_settings()
        yield StreamTap([s.graph_table, s.tweets_table, s.likes_table])


@pytest.mark.parametrize("celebrities", [0, 200])
def test_a_home_read_and_an_unread_poll_touch_three_slots_whatever_the_reader_follows(
    server, world, celebrities
):
    accounts, graph, tweets = services.accounts(), services.graph(), services.tweets()
    me, fan = user(accounts, "reader"), user(accounts, "fan")
    friends = [user(accounts, f"friend{i}") for i in range(20)]
    big = [user(accounts, f"celeb{i}") for i in range(celebrities)]
    for friend in friends:
        graph.follow(me, friend)
    for celebrity in big:  # two followers each: over the threshold of one
        graph.follow(me, celebrity)
        graph.follow(fan, celebrity)
    services.container().count_batch({"Records": world.drain()})
    timelines, notifications = services.timelines(), services.notifications()
    assert len(timelines.celebrities_followed(me)) == celebrities
    for author in friends + big[:30]:
        posted = int(tweets.post(author, f"news from {author}", None, []).id)
        timelines.tweet_created(author, posted)
    timelines.rebuild(me)
    timelines.home(me, 20, None)  # warm: caches filled, sets built
    notifications.counts(me)

    seen = Seen(server.url)
    page = timelines.home(me, 20, None)
    counts = notifications.counts(me)
    named = seen.stop()

    assert len(page.items) == 20 and counts.home == 20 + min(celebrities, 30)
    authors = {int(t.author.id) for t in page.items}
    render = {k for k in named if _tag(k).startswith("tw:")} | {
        k for k in named if _tag(k) in {f"u:{a}" for a in authors - {me}}
    }
    reader = named - render
    # The reader's part: its own tag, the celebrities' tag (when it follows any), the system list.
    expected = {f"u:{me}", "sys"} | ({keys.CELEBRITY_TAG.strip("{}")} if celebrities else set())
    assert {_tag(k) for k in reader} == expected, sorted(reader)
    assert len({key_slot(k.encode()) for k in reader}) <= 3
    # The page's render: a tweet's copy and counts share its tag, its author's profile another.
    assert len({key_slot(k.encode()) for k in render}) <= 2 * len(page.items)
