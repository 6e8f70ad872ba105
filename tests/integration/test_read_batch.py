"""A read batch on one node answers as redis-py's own pipeline does (warble.dal.redis: packed by
hiredis directly, replies read from the connection's parser): the same values after the
client's reply callbacks, errors in place, a lost script run again, a dropped connection
reconnected. Against a Redis server of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis as redis_lib
from warble.dal.redis import ReadBatch, scripted, send_pipelined

from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration

# Commands of the warm reads' batches (the gate, the home page, the tweets' hydration), with
# one of each reply shape: a bulk string, nil, an integer read as a bool, a map, lists.
COMMANDS: list[tuple[object, ...]] = [
    ("GET", "k:str"),
    ("GET", "k:none"),
    ("EXISTS", "k:zset"),
    ("EXPIRE", "k:zset", 60),
    ("EXPIRE", "k:none", 60),
    ("ZREVRANGEBYLEX", "k:zset", "+", "(0", "LIMIT", 0, 2),
    ("HGETALL", "k:hash"),
    ("HGETALL", "k:none"),
    ("HMGET", "k:hash", "*", "a", "z"),
    ("MGET", "k:str", "k:none", "k:zset:no"),
    ("GET", "k:hash"),  # WRONGTYPE: the error in its place
    ("SET", "k:set", "é", "NX", "PX", 1000),  # a write's reply callback (a bool)
]


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    # A server of this file's own: its tests flush every script and kill connections, which on
    # the suite's shared server reach the other worker's tests (a lost script reloaded there
    # is round trips that test_stream_batches counts: 35 where it allows 3).
    private = RedisServer()
    private.start()
    yield private
    private.stop()


@pytest.fixture
def client(server: RedisServer) -> Iterator[redis_lib.Redis]:
    made = redis_lib.Redis.from_url(server.url, decode_responses=True)
    made.flushdb()
    made.set("k:str", "value")
    made.zadd("k:zset", {"0000000000000000001:7": 0, "0000000000000000002:7": 0})
    made.hset("k:hash", mapping={"*": "3", "a": "1"})
    yield made
    made.close()


def _shown(answers: list[object]) -> list[object]:
    return [(type(a).__name__, str(a)) if isinstance(a, Exception) else a for a in answers]


def test_a_batch_answers_as_a_redis_py_pipeline(client):
    pipe = client.pipeline(transaction=False)
    for command in COMMANDS:
        pipe.execute_command(*command)
    expected = pipe.execute(raise_on_error=False)
    client.delete("k:set")

    answers = send_pipelined(client, COMMANDS)

    assert _shown(answers) == _shown(expected)
    assert answers[3] is True and answers[4] is False  # EXPIRE's callback
    assert isinstance(answers[10], redis_lib.ResponseError)


def test_a_batch_reader_raises_its_error_and_the_others_answer(client):
    batch = ReadBatch(client)
    ok = batch.add("GET", "k:str")
    wrong = batch.add("GET", "k:hash")
    many = batch.mget(["k:str", "k:none"])
    batch.run()
    assert ok() == "value"
    with pytest.raises(redis_lib.ResponseError):
        wrong()
    assert many() == ["value", None]


def test_a_script_lost_by_the_server_is_loaded_and_run_again(client):
    script = client.register_script("return ARGV[1]")
    client.script_flush()
    batch = ReadBatch(client)
    answer = scripted(batch, script, ["k:str"], ["again"])
    batch.run()
    assert answer() == "again"


def test_a_dropped_connection_is_made_again_for_the_next_batch(client):
    assert send_pipelined(client, [("GET", "k:str")]) == ["value"]
    for info in client.client_list():
        if info.get("cmd") in {"get", "mget"}:  # this thread's batch connection
            client.client_kill_filter(_id=info["id"])
    # the batch that finds it gone fails (this client retries none) and drops it
    with pytest.raises(redis_lib.ConnectionError):
        send_pipelined(client, [("GET", "k:str")])
    assert send_pipelined(client, [("GET", "k:str")]) == ["value"]
