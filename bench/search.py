"""Search and hashtags: people search, a hashtag's page and trends through the SearchFunction
handler, each against the raw store calls it stands on, in the same run.

- People search (``GET /v1/search/users?q=``) on the seeded population's size (20,000 users) and
  on 1,000,000 rows in the users table (``BENCH_SEARCH_ROWS``; a ``--quick`` run stops at
  50,000): the headline baseline is the raw ``warble_search`` statement the path runs, with the
  same query and the viewer's friends; the breakdown adds the path's Redis pipelines made raw.
  The viewer has 20 friends, some matching. The statement's plan (EXPLAIN ANALYZE of its main
  query) is a note: docs/search.md quotes it.
- A hashtag's page of 20 (warm caches): against the raw Query of the tag's partition.
- Trends: against the raw EVALSHA of the trends script (the path's one Redis call).

Users are inserted by SQL (the trigger fills the prefixes, as for a signup): 1,000,000 rows take
several minutes on a quiet machine (about 20 prefix rows each).
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Run, group

PASSWORD = "correct horse battery staple"
SEEDED = 20_000
FULL_ROWS = int(os.environ.get("BENCH_SEARCH_ROWS", "1000000"))
QUICK_ROWS = 50_000
QUERIES = ("mar", "nunez")  # a prefix many names share, and one last name
FIRST = ("José", "María", "Ana", "Jean", "Chloé", "Zoë", "Björn", "Søren", "François", "Ángel",
         "Noah", "Emma", "Olivia", "Liam", "Lucas", "Léa", "Wei", "Li", "Kenji", "Yuki",
         "Priya", "Arjun", "Fatima", "Omar", "Ingrid", "Pedro", "Camila", "Mateo", "Inès",
         "Marco", "Martha", "Marie", "Mariam", "Łukasz", "Hugo", "Nora", "Elif",
         "Sven")  # fmt: skip
LAST = ("Núñez", "García", "Martínez", "Smith", "Müller", "Dubois", "Lefèvre", "Rossi",
        "Kowalski", "Tanaka", "Kim", "Chen", "Singh", "Öztürk", "Andersson", "Hansen", "Novák",
        "Silva", "Santos", "López", "Pérez", "Brown", "Taylor", "Martin", "Bernard", "Marsh",
        "Dvořák", "Nunes", "Marquez", "Okafor", "Ivanova", "Haddad")  # fmt: skip


def _fill_users(pg: Any, start: int, stop: int) -> None:
    """Users ``start`` to ``stop`` (exclusive) by one INSERT ... SELECT; followers_count from a
    heavy-tailed draw. Ids far from Snowflakes, so they never meet a minted one."""
    first = "ARRAY[" + ",".join(f"'{n}'" for n in FIRST) + "]"
    last = "ARRAY[" + ",".join(f"'{n}'" for n in LAST) + "]"
    pg.execute(
        f"""INSERT INTO users (id, username, email, password_hash, display_name, followers_count)
        SELECT g, 'b' || to_hex(g), 'b' || g || '@example.com', 'x',
               ({first})[1 + (hashint8(g) & 2147483647) %% {len(FIRST)}] || ' ' ||
               ({last})[1 + (hashint8(g + 7) & 2147483647) %% {len(LAST)}],
               floor(exp(random() * random() * 12))::int
        FROM generate_series(%s, %s - 1) AS g""",
        (start, stop),
    )
    pg.execute("ANALYZE users")
    pg.execute("ANALYZE search_prefixes")


@group("search", "people search, a hashtag's page and trends, through the SearchFunction handler")
def search_group(run: Run) -> Iterator[Benchmark]:
    w = search_world(run)
    rows = 0
    for target in (SEEDED, FULL_ROWS if run.scale >= 1 else QUICK_ROWS):
        _fill_users(w.pg, 10**12 + rows, 10**12 + target)
        rows = target
        for q in QUERIES:
            yield people_benchmark(w, q, rows)
    yield hashtag_page(w)
    yield trends(w)


@dataclass
class SearchWorld:
    """The bench stack, its raw clients and SearchFunction's handler, with a viewer and 20
    friends whose names match the queries (the friends branch runs)."""

    bench_stack: Any
    raw: Any
    ddb: Any
    pg: Any
    handler: Any
    viewer: Any
    viewer_id: int
    friends: list[int]


def search_world(run: Run) -> SearchWorld:
    import psycopg
    from warble import security, services
    from warble.dal.accounts import UserRepository

    bench_stack = stack.shared(run)
    raw, ddb = stack.raw_clients(run, bench_stack)
    pg = psycopg.connect(
        f"host=127.0.0.1 user=postgres dbname={stack.BENCH_DB} sslmode=disable", autocommit=True
    )
    run.cleanups.append(pg.close)
    handler = stack.load_function("search").handler

    repository = UserRepository(services.container().database)
    hashed = security.hash_password(PASSWORD, 4)
    graph, accounts = services.graph(), services.accounts()

    def user(name: str, display: str) -> int:
        user_id = services.ids().next_id()
        repository.insert(user_id, name, f"{name}@example.com", hashed, display)
        return user_id

    viewer_id = user("se_viewer", "Viewer")
    friends = [user(f"se_f{i:02d}", f"{random.choice(FIRST)} Núñez{i}") for i in range(20)]
    for friend in friends:
        graph.follow(viewer_id, friend)
        graph.follow(friend, viewer_id)
    viewer = accounts.login("se_viewer", PASSWORD, "bench")
    return SearchWorld(bench_stack, raw, ddb, pg, handler, viewer, viewer_id, friends)


def people_benchmark(w: SearchWorld, q: str, rows: int) -> Benchmark:
    """People search for `q` over `rows` users, against the raw statement the path runs."""
    from warble import keys, services
    from warble.dal.search import CANDIDATES_SQL
    from warble.domain.search.service import CANDIDATES

    raw, ddb, pg, viewer, viewer_id = w.raw, w.ddb, w.pg, w.viewer, w.viewer_id
    evt = stack.as_session(copy.deepcopy(stack.event("search/users.json")), viewer)
    evt["rawQueryString"] = f"q={q}"
    evt["queryStringParameters"] = {"q": q}
    call = expect(w.handler, evt, 200)
    mine = sorted(w.friends)

    def raw_sql() -> Any:
        return pg.execute(CANDIDATES_SQL, (q, mine, CANDIDATES)).fetchall()

    ids = [int(r[0]) for r in raw_sql()][:CANDIDATES]

    first_reads = stack.session_check(
        raw,
        viewer,
        lambda pipe: (
            pipe.mget([keys.friends(viewer_id).value]),
            pipe.mget([keys.degree2(viewer_id).value]),
            pipe.hgetall(keys.memberships("blocks", viewer_id).value),
        ),
    )
    call()  # warm: what the path caches is cached
    ranked = services.search().ranked(viewer_id, q)
    page = [uid for uid, _ in ranked[:20]]
    table = w.bench_stack.tables["GraphTable"]
    # Users whose following sets are not in Redis (nobody of them reads): the path asks their
    # edges whether they follow the viewer, in one BatchGetItem.
    cold = [u for u in page if not raw.exists(keys.memberships("following", u).value)]
    edge_keys = [{"pk": {"S": f"U#{u}"}, "sk": {"S": f"O#{viewer_id:019d}"}} for u in cold]

    def raw_rest() -> Any:
        # After the statement: the candidates' friends and counts; the page's profiles,
        # counts and relationships (HMGETs of the following sets), with the snapshot's SET.
        pipe = raw.pipeline(transaction=False)
        pipe.mget([keys.friends(u).value for u in ids])
        pipe.mget([keys.counts(u).value for u in ids])
        pipe.execute()
        pipe = raw.pipeline(transaction=False)
        pipe.mget([keys.profile(u).value for u in page])
        pipe.mget([keys.counts(u).value for u in page])
        pipe.hmget(keys.memberships("following", viewer_id).value, "*", *page)
        for u in page:
            pipe.hmget(keys.memberships("following", u).value, "*", viewer_id)
        pipe.set(keys.search_snapshot(viewer_id, "1"), "[]", ex=600)
        return pipe.execute()

    def raw_edges() -> Any:
        if not edge_keys:
            return None
        wanted = {"Keys": edge_keys, "ConsistentRead": True, "AttributesToGet": ["sk"]}
        return ddb.batch_get_item(RequestItems={table: wanted})

    def raw_pipelines() -> Any:
        # The gate with the viewer's friends, second-degree set and blocks, then the rest.
        first_reads()
        return raw_rest()

    def raw_all() -> None:
        first_reads()
        raw_sql()
        raw_rest()
        raw_edges()

    def plan() -> list[str]:
        explained = pg.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT p.user_id"
            " FROM search_prefixes p WHERE p.prefix = warble_fold(%s)"
            " ORDER BY p.followers_count DESC, p.user_id LIMIT %s",
            (q, CANDIDATES),
        ).fetchall()
        return [f"plan at {rows:,} users: " + " / ".join(r[0].strip() for r in explained)]

    return Benchmark(
        f"GET /v1/search/users?q={q}, {rows:,} users (handler)",
        call,
        raw_sql,
        baseline="raw warble_search statement",
        breakdown=[
            ("raw Redis round trips of the path (gate included)", raw_pipelines),
            *([("raw BatchGetItem of the cold users' edges", raw_edges)] if edge_keys else []),
            ("every store call of the path, raw", raw_all),
        ],
        floor="every store call of the path, raw",
        describe=plan,
        check=lambda: stack.compare_traces(call, raw_all, "people search"),
    )


def hashtag_page(w: SearchWorld) -> Benchmark:
    """A hashtag's page of 20 with warm caches, against the raw Query of the tag's partition."""
    from warble import services
    from warble.dal.hashtags import partition
    from warble.events import TweetPosted

    ddb, viewer, friends = w.ddb, w.viewer, w.friends
    tweets, hashtags = services.tweets(), services.hashtags()
    posted = [tweets.post(friend, f"picnic at noon #Bench {n}", None, []) for n, friend in
              enumerate(friends * 10)]  # fmt: skip
    hashtags.tweets_changed(
        TweetPosted(int(t.id), int(t.author.id), t.text, hashtags=tuple(t.hashtags)) for t in posted
    )
    evt = stack.as_session(copy.deepcopy(stack.event("search/hashtag.json")), viewer)
    evt["rawPath"] = evt["rawPath"].replace("warble", "bench")
    evt["pathParameters"] = {"tag": "bench"}
    tag_page = expect(w.handler, evt, 200)
    table = w.bench_stack.tables["HashtagsTable"]

    def raw_query() -> Any:
        return ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": partition("bench", 0)}},
            ScanIndexForward=False,
            Limit=20,
        )

    return Benchmark(
        "GET /v1/hashtags/{tag}/tweets, page of 20, warm (handler)",
        tag_page,
        raw_query,
        baseline="raw Query of the tag's partition",
    )


def trends(w: SearchWorld) -> Benchmark:
    """Trends of 50 tags, against the raw EVALSHA of the trends script."""
    from warble import keys, services
    from warble.dal.hashtags import _TRENDS, RedisTrends
    from warble.domain.hashtags.ports import TagUse
    from warble.domain.hashtags.service import WINDOW_MS
    from warble.ids import decompose

    raw, viewer = w.raw, w.viewer
    trends = RedisTrends(services.container().redis, WINDOW_MS)
    now = decompose(services.ids().next_id())[0]
    uses = [
        (TagUse(f"tag{n % 50}", 10**15 + n, n % 97), now - n) for n in range(5000)
    ]  # 50 tags, 97 authors
    trends.apply(uses, [], now)
    top = raw.register_script(_TRENDS)
    evt = stack.as_session(copy.deepcopy(stack.event("search/trends.json")), viewer)

    def raw_top() -> Any:
        return top(keys=keys.TRENDS_KEYS, args=["top", now - WINDOW_MS, 10_000, 10])

    raw_trends: Callable[[], Any] = raw_top
    return Benchmark(
        "GET /v1/trends, 50 tags of 5,000 uses (handler)",
        expect(w.handler, evt, 200),
        raw_trends,
        baseline="raw EVALSHA of the trends script",
    )
