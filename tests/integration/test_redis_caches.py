"""Several caches as one keyspace (warble.dal.redis, ``SlotMap``): slot ``s`` lives on cache
``s % N``, and the code's commands, pipelines, scripts and batches reach it unchanged. A cache
added to the keyspace takes its slots a stage at a time (``CacheMove``).

Each cache here is a real single-node cluster-mode redis-server holding all 16384 slots, as each
ElastiCache cluster holds all of its own; what a key's cache holds is read back with a plain
client of that server.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from redis.cluster import NodesManager, RedisCluster
from redis.crc import key_slot
from warble import services
from warble.dal.redis import (
    CacheMove,
    ReadBatch,
    SlotMap,
    caches,
    connect,
    eval_scripts,
    mget,
)
from warble.settings import Settings, SettingsError

from tests.conftest import CLUSTER_FIRST_PORT
from tests.support.redis_cluster import LocalCluster, start_caches, start_node

pytestmark = pytest.mark.integration

USER = "warble-test-app"


@pytest.fixture(scope="module")
def three() -> Iterator[list[LocalCluster]]:
    started = start_caches(CLUSTER_FIRST_PORT + 5, 3)
    yield started
    for cache in started:
        cache.stop()


@pytest.fixture
def plain(three: list[LocalCluster]) -> Iterator[list[redis.Redis]]:
    """A plain client of each cache's one server, everything in them flushed first."""
    servers = [redis.Redis(host="127.0.0.1", port=c.ports[0], decode_responses=True) for c in three]
    for server in servers:
        server.flushall()
        server.script_flush()
    yield servers
    for server in servers:
        server.close()


def _settings(first: LocalCluster, *more: LocalCluster, **overrides: object) -> Settings:
    """The three caches as the template gives them: empty entries among the others."""
    more_urls = ",".join(["", *(cache.url for cache in more), ""])
    return Settings.from_environment(
        redis_url=first.url, redis_cluster=True, redis_more_urls=more_urls, **overrides
    )


def _keys(count: int) -> list[str]:
    return [f"{{u:{n}}}:probe" for n in range(count)]


def _cache(key: str, n: int = 3) -> int:
    return key_slot(key.encode()) % n


@pytest.fixture
def client(three: list[LocalCluster], plain: list[redis.Redis]) -> Iterator[RedisCluster]:
    built = connect(_settings(*three))
    assert isinstance(built, RedisCluster)
    yield built
    built.close()


def test_each_key_is_written_to_the_cache_of_its_slot_and_only_there(client, plain):
    keys = _keys(60)
    for value, key in enumerate(keys):
        client.set(key, value)
    for value, key in enumerate(keys):
        holders = [n for n, server in enumerate(plain) if server.get(key) == str(value)]
        assert holders == [_cache(key)]
    assert all(server.dbsize() > 10 for server in plain)  # each cache holds about a third
    assert [client.get(key) for key in keys] == [str(v) for v in range(60)]


def test_a_pipeline_across_the_caches_answers_in_the_order_it_was_queued(client, plain):
    keys = _keys(30)
    assert {_cache(key) for key in keys} == {0, 1, 2}
    pipe = client.pipeline(transaction=False)
    for value, key in enumerate(keys):
        pipe.set(key, value)
        pipe.incr(key)
    assert pipe.execute() == [answer for v in range(30) for answer in (True, v + 1)]
    pipe = client.pipeline(transaction=False)
    for key in reversed(keys):
        pipe.get(key)
    assert pipe.execute() == [str(v + 1) for v in reversed(range(30))]


def test_a_registered_script_runs_on_every_cache_and_is_loaded_again_where_it_was_lost(
    client, plain
):
    script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    keys = _keys(12)
    assert [script(keys=[key], args=[2]) for key in keys] == [2] * 12
    plain[1].script_flush()  # one cache lost its scripts (a replaced node)
    answers = eval_scripts(client, [(script, [key], [3]) for key in keys])
    assert answers == [5] * 12  # each ran once: the NOSCRIPT calls did not run
    assert [plain[_cache(key)].get(key) for key in keys] == ["5"] * 12
    assert all(server.script_exists(script.sha) == [True] for server in plain)


def test_batched_reads_and_mget_find_keys_on_every_cache_and_their_misses(client, plain):
    keys = _keys(20)
    for value, key in enumerate(keys[:15]):
        plain[_cache(key)].set(key, value)  # written behind the client's back, on its cache
    expected = [str(v) for v in range(15)] + [None] * 5
    assert mget(client, keys) == expected
    batch = ReadBatch(client)
    many = batch.mget(keys)
    one = batch.add("GET", keys[7])
    batch.run()
    assert many() == expected
    assert one() == "7"


def test_a_refresh_of_the_slot_table_builds_the_same_table(three, client):
    """What the cluster client does after a connection error, a MOVED past its
    ``reinitialize_steps`` or CLUSTERDOWN: every cache's table read again, merged again."""
    manager = client.nodes_manager
    assert isinstance(manager, SlotMap)
    before = {slot: [node.name for node in nodes] for slot, nodes in manager.slots_cache.items()}
    assert len(before) == 16384
    assert all(names == [f"127.0.0.1:{three[slot % 3].ports[0]}"] for slot, names in before.items())
    manager.initialize()
    failed = next(iter(manager.caches[2].nodes_cache))
    manager.initialize(last_failed_node_name=failed)
    after = {slot: [node.name for node in nodes] for slot, nodes in manager.slots_cache.items()}
    assert after == before
    key = _keys(40)[-1]
    client.set(key, "after")
    assert client.get(key) == "after"


def test_a_cache_that_goes_away_fails_its_keys_alone_and_is_found_again_when_back(three, plain):
    client = connect(_settings(*three))
    keys = _keys(30)
    gone = [key for key in keys if _cache(key) == 2]
    kept = [key for key in keys if _cache(key) != 2]
    port = three[2].ports[0]
    three[2].stop()
    try:
        with pytest.raises((redis.RedisError, redis.exceptions.RedisClusterException)):
            client.set(gone[0], "lost")  # as one cluster fails when it is down
        for key in kept:
            client.set(key, "kept")
        assert mget(client, kept) == ["kept"] * len(kept)
    finally:
        back = start_caches(port, 1, search=1)[0]  # the same port, empty, as a replaced node
        three[2] = back
    client.set(gone[0], "back")
    assert redis.Redis(port=port, decode_responses=True).get(gone[0]) == "back"
    client.close()


@pytest.fixture
def with_iam(three, plain, monkeypatch) -> Settings:
    """The caches' one IAM user on every cache (any password: a token is checked only by
    ElastiCache), and the caches' names as the template gives them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    for server in plain:
        server.execute_command("ACL", "SETUSER", USER, "reset", "nopass", "on", "~*", "&*", "+@all")
    return _settings(
        *three,
        redis_iam_user=USER,
        redis_cache_name="Warble-Nodes",
        redis_more_cache_names=",Warble-Nodes2,Warble-Nodes3,",
        redis_serverless=False,
    )


def _signs_in_as(client: RedisCluster) -> dict[int, tuple[str, str]]:
    """Per node (by port): the user its connections sign in as, and the cache its token names."""
    found = {}
    for node in client.get_nodes():
        conn = client.get_redis_connection(node)
        provider = conn.connection_pool.connection_kwargs["credential_provider"]
        user, token = provider.get_credentials()
        assert conn.acl_whoami() == user
        found[node.port] = (user, token.split("/?")[0])
    return found


def test_each_cache_is_signed_in_to_with_a_token_that_names_it(three, with_iam):
    client = connect(with_iam)
    assert _signs_in_as(client) == {
        three[0].ports[0]: (USER, "warble-nodes"),
        three[1].ports[0]: (USER, "warble-nodes2"),
        three[2].ports[0]: (USER, "warble-nodes3"),
    }
    client.close()


def test_a_slot_moved_to_a_new_node_of_one_cache_follows_it_with_that_caches_credentials(
    three, plain, with_iam
):
    """A resharding within cache 1: one slot moves to a node the client has never seen. The
    MOVED answer patches the slot; the new node's connections are made by cache 1's manager
    (its token names cache 1); a full refresh afterwards keeps the slot there."""
    client = connect(with_iam)
    key = next(key for key in _keys(50) if _cache(key) == 1)
    slot = key_slot(key.encode())
    owner = plain[1]
    new_id = None
    joined = start_node(CLUSTER_FIRST_PORT + 5)
    try:
        new = redis.Redis(port=joined.ports[0], decode_responses=True)
        new.execute_command("ACL", "SETUSER", USER, "reset", "nopass", "on", "~*", "&*", "+@all")
        owner.execute_command("CLUSTER", "MEET", "127.0.0.1", joined.ports[0])
        new_id = new.execute_command("CLUSTER", "MYID")
        _until(lambda: new_id in owner.execute_command("CLUSTER", "NODES"))
        owner.execute_command("CLUSTER", "SETSLOT", slot, "NODE", new_id)
        new.execute_command("CLUSTER", "SETSLOT", slot, "NODE", new_id)

        client.set(key, "moved")  # cache 1 answers MOVED: the client follows

        assert new.get(key) == "moved"
        assert owner.dbsize() == 0  # (asked for the key, it would answer MOVED too)
        assert client.nodes_manager.slots_cache[slot][0].port == joined.ports[0]
        assert _signs_in_as(client)[joined.ports[0]] == (USER, "warble-nodes2")
        client.nodes_manager.initialize()
        assert client.nodes_manager.slots_cache[slot][0].port == joined.ports[0]
        assert client.nodes_manager.slots_cache[slot - 1][0].port != joined.ports[0]
        assert client.get(key) == "moved"
        new.close()
    finally:
        client.close()
        joined.stop()
        # cache 1 alone again: its slot back, the stopped node forgotten
        mine = owner.execute_command("CLUSTER", "MYID")
        owner.execute_command("CLUSTER", "SETSLOT", slot, "NODE", mine)
        if new_id is not None:
            owner.execute_command("CLUSTER", "FORGET", new_id)


def _until(condition, timeout: float = 10) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the cluster did not settle"
        time.sleep(0.05)


def test_one_cache_is_the_plain_cluster_client_as_before(three, plain):
    for more in ("", ",,,"):
        settings = Settings.from_environment(
            redis_url=three[0].url, redis_cluster=True, redis_more_urls=more
        )
        client = connect(settings)
        assert type(client.nodes_manager) is NodesManager
        client.set("{u:1}:probe", "1")
        assert plain[0].get("{u:1}:probe") == "1"
        client.close()


def test_the_settings_pair_each_further_cache_with_its_name_and_refuse_a_mismatch():
    settings = Settings.from_environment(
        redis_url="rediss://a:6379",
        redis_cache_name="a",
        redis_more_urls="rediss://b:6379,,rediss://c:6379,",
        redis_more_cache_names="b,,c,",
        redis_iam_user=USER,
    )
    assert caches(settings) == [("rediss://a:6379", "a"), ("rediss://b:6379", "b"),
                                ("rediss://c:6379", "c")]  # fmt: skip
    with pytest.raises(SettingsError):
        caches(Settings.from_environment(redis_more_urls="rediss://b:6379,rediss://c:6379",
                                         redis_more_cache_names="b",
                                         redis_iam_user=USER))  # fmt: skip
    with pytest.raises(SettingsError):  # several caches are cluster-mode caches
        connect(Settings.from_environment(redis_cluster=False, redis_more_urls="redis://b:1"))


def test_the_composition_root_builds_the_several_caches_from_the_environment(
    three, plain, monkeypatch
):
    monkeypatch.setenv("REDIS_URL", three[0].url)
    monkeypatch.setenv("REDIS_CLUSTER", "true")
    monkeypatch.setenv("REDIS_MORE_URLS", f"{three[1].url},{three[2].url}")
    services.reset()
    try:
        client = services.container().redis
        assert isinstance(client, RedisCluster) and isinstance(client.nodes_manager, SlotMap)
        keys = _keys(9)
        for key in keys:
            client.set(key, "via the container")
        assert [plain[_cache(key)].get(key) for key in keys] == ["via the container"] * 9
    finally:
        services.reset()


def _holder(plain: list[redis.Redis], key: str, value: str) -> list[int]:
    return [n for n, server in enumerate(plain) if server.get(key) == value]


def test_a_cache_added_takes_its_slots_a_stage_at_a_time_from_a_warm_client(three, plain):
    """From two caches to three: before the move every slot stays where two put it; during it,
    the slots of the stages begun are on their new cache and the others on their old one; after
    it, every slot is where three put it. The client is made once, before the move: its table
    follows the stages without a refresh."""
    start = time.time() + 0.6
    client = connect(_settings(*three, redis_move_from=2, redis_move_start=start,
                               redis_move_minutes=2 / 60))  # fmt: skip
    move = client.nodes_manager._move
    assert isinstance(move, CacheMove)
    keys = _keys(120)
    for key in keys:
        client.set(key, "before")
    assert time.time() < start, "the machine was too slow to write before the move"
    assert all(_holder(plain, key, "before") == [key_slot(key.encode()) % 2] for key in keys)

    time.sleep(max(0.0, start + 1.0 - time.time()))  # about half of the stages begun
    began, placed = time.time(), {}
    for key in keys:
        client.set(key, "during")
    ended = time.time()
    for key in keys:
        slot = key_slot(key.encode())
        allowed = {move.cache(slot, 3, began), move.cache(slot, 3, ended)}
        placed[key] = _holder(plain, key, "during")
        assert len(placed[key]) == 1 and placed[key][0] in allowed
    moved = [key for key in keys if placed[key] == [key_slot(key.encode()) % 3]
             and key_slot(key.encode()) % 3 != key_slot(key.encode()) % 2]  # fmt: skip
    waiting = [key for key in keys if placed[key] == [key_slot(key.encode()) % 2]
               and key_slot(key.encode()) % 3 != key_slot(key.encode()) % 2]  # fmt: skip
    assert moved and waiting  # the move is part done: some slots moved, some not yet

    time.sleep(max(0.0, start + 2.1 - time.time()))
    for key in keys:
        client.set(key, "after")
    assert all(_holder(plain, key, "after") == [key_slot(key.encode()) % 3] for key in keys)
    assert client.nodes_manager._restage_at is None  # the move is over: no more stages
    client.close()


def test_a_moves_stages_spread_its_slots_over_the_slot_range_and_move_only_what_changes():
    move = CacheMove(before=4, starts=0.0, seconds=1800.0)
    stages: dict[int, list[int]] = {}
    for slot in range(16384):
        stages.setdefault(move.stage(slot), []).append(slot)
    assert sorted(stages) == list(range(CacheMove.STAGES))
    sizes = [len(slots) for slots in stages.values()]
    assert max(sizes) - min(sizes) <= 1  # 273 or 274 slots a stage
    for slots in stages.values():  # every stage touches every part of the slot range
        assert len({slot * 16 // 16384 for slot in slots}) == 16
    changed = sum(move.cache(s, 5, -1.0) != move.cache(s, 5, 1801.0) for s in range(16384))
    assert changed == sum(s % 4 != s % 5 for s in range(16384))  # 80%: the others stay put
    assert move.next_change(-1.0) == 0.0 and move.next_change(1799.0) is None
    with pytest.raises(SettingsError):
        CacheMove.of(Settings.from_environment(redis_move_from=3), count=3)


def test_the_sweep_removes_from_each_cache_only_the_keys_of_slots_it_no_longer_holds(
    three, plain, monkeypatch
):
    """After a move from two caches to three, the old caches still hold the keys of the slots
    that left them (written before the move); the sweep, a node at a time from a cursor,
    removes those and nothing else."""
    from warble.dal import slot_sweep

    keys = _keys(300)
    for key in keys:  # as two caches held them, and as three hold them now
        plain[key_slot(key.encode()) % 2].set(key, "old")
        plain[key_slot(key.encode()) % 3].set(key, "kept")
    client = connect(_settings(*three, redis_move_from=2, redis_move_start=time.time() - 60,
                               redis_move_minutes=0.5))  # fmt: skip
    monkeypatch.setattr(slot_sweep, "SCAN_COUNT", 20)  # several pages a node
    nodes = slot_sweep.primaries(client)
    assert nodes == sorted(f"127.0.0.1:{cache.ports[0]}" for cache in three)
    removed, steps = 0, 0
    for node in nodes:
        cursor = 0
        while True:
            cursor, gone = slot_sweep.sweep(client, node, cursor, seconds=0.0)  # a page a step
            removed, steps = removed + gone, steps + 1
            if cursor == 0:
                break
    assert steps > len(nodes)  # the cursor carried the sweep across calls
    left = [key for key in keys if key_slot(key.encode()) % 2 != key_slot(key.encode()) % 3]
    assert removed == len(left) > 150
    for key in keys:
        assert _holder(plain, key, "kept") == [key_slot(key.encode()) % 3]
        assert _holder(plain, key, "old") == []  # moved: swept; stayed: overwritten above
    assert slot_sweep.primaries(connect(_settings(three[0]))) == []
    client.close()


def test_the_operator_lists_the_nodes_and_sweeps_one_from_its_cursor(three, plain, monkeypatch):
    """OperatorFunction's ``sweep_moved_slots``, as infra/operator.py invokes it."""
    from tests.integration.test_sample_events import _load_function
    from tests.support.lambda_context import Context

    monkeypatch.setenv("REDIS_URL", three[0].url)
    monkeypatch.setenv("REDIS_CLUSTER", "true")
    monkeypatch.setenv("REDIS_MORE_URLS", f"{three[1].url},{three[2].url}")
    monkeypatch.setenv("REDIS_MOVE_FROM", "2")
    monkeypatch.setenv("REDIS_MOVE_START", str(int(time.time()) - 120))
    monkeypatch.setenv("REDIS_MOVE_MINUTES", "1")  # over
    moved = next(k for k in _keys(50) if key_slot(k.encode()) % 2 != key_slot(k.encode()) % 3)
    plain[key_slot(moved.encode()) % 2].set(moved, "left behind")
    services.reset()
    try:
        operator = _load_function("operator").handler
        nodes = operator({"task": "sweep_moved_slots"}, Context())["nodes"]
        assert len(nodes) == 3
        answers = [operator({"task": "sweep_moved_slots", "node": node}, Context())
                   for node in nodes]  # fmt: skip
        assert sum(answer["removed"] for answer in answers) == 1
        assert all(answer["cursor"] == 0 for answer in answers)
        assert all(server.get(moved) is None for server in plain)
    finally:
        services.reset()
