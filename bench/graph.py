"""Follow graph: follow and unfollow, 100 relationship statuses, a followers page and degree
queries, through the GraphFunction handler, against the raw store operations they need.

Every path goes through the real handler (functions/graph/app.py) with an event from
events/graph/ that carries a real session's token. The users are inserted with one
bcrypt hash at cost 4 (as accounts' carol is: signup hashes at the production cost, which would
make 100+ users take half a minute) and the two viewers log in for their sessions.

- Follow and unfollow (gina -> gus, who does not follow her back) each do real work on every
  sample. A follow is timed from "no edge", then the edge is removed untimed by a raw unfollow
  transaction conditional on the edge the follow wrote (so a follow that wrote nothing fails
  loudly). An unfollow is timed after an untimed raw follow, conditional on there being no edge
  (so an unfollow that removed nothing fails loudly at the next sample). The headline baseline
  is the raw TransactWriteItems of the very items warble.dal.graph writes (two edges, two list
  items, the META counter, the reverse-edge check), set up and cleaned up the same way.
- ``GET /v1/users/me/relationships`` for 100 ids: one HMGET of the viewer's following set and
  one of each user's, in one pipeline (warble.dal.memberships); the breakdown also times the
  two BatchGetItem calls of the 200 edge keys that the path made before.
- ``GET /v1/users/{id}/followers?limit=20`` with warm caches: the headline is the raw Query of
  the page plus the raw MGET of its 20 cached profiles; the breakdown has every round trip.
- ``GET /v1/users/me/degree/{id}`` for a 1st, 2nd, 3rd-degree and an unconnected target on a
  small friends graph (a 3rd from the viewer's second-degree set, computed on the first call and
  cached: docs/graph.md): a note counts the store reads; the headline is one raw GetItem.

The checks compare the round trips (``stack.compare_traces``) and also the DynamoDB requests
themselves (items, keys, conditions, projections; the minted seq and request token aside), so a
baseline that stops writing or reading what the path does is reported.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Run, group

PASSWORD = "correct horse battery staple"
CROWD = 100  # users whose relationship statuses are read (the route's maximum)
PAGE = 20  # the followers page


def padded(value: int) -> str:
    """An id in a sort key (warble.dal.graph zero-pads to 19 digits)."""
    return f"{value:019d}"


def key(user_id: int, sk: str) -> dict[str, Any]:
    return {"pk": {"S": f"U#{user_id}"}, "sk": {"S": sk}}


def with_query(evt: dict[str, Any], **params: str) -> dict[str, Any]:
    """The event with this query string."""
    evt = copy.deepcopy(evt)
    evt["rawQueryString"] = "&".join(f"{name}={value}" for name, value in params.items())
    evt["queryStringParameters"] = dict(params)
    return evt


def body(answer: dict[str, Any]) -> Any:
    return json.loads(answer["body"])


# ---- who the graph benchmarks act as ------------------------------------------------------------


@dataclass
class GraphUsers:
    viewer: Any  # IssuedSession (gina): follows, statuses, the followers page
    target: int  # gus: whom gina follows and unfollows; he does not follow her
    crowd: list[int]  # gina follows crowd[:40]; crowd[20:60] follow gina
    hub: int  # followed by crowd[:30]: its followers page
    degree_viewer: Any  # IssuedSession (dana): the degree queries
    degrees: list[tuple[str, int, int | None]]  # (label, target, the degree expected)


def graph_users(run: Run) -> GraphUsers:
    def build() -> GraphUsers:
        stack.shared(run)
        from warble import security, services
        from warble.dal.accounts import UserRepository

        repository = UserRepository(services.container().database)
        hashed = security.hash_password(PASSWORD, 4)  # one hash for everyone: setup is fast
        accounts, graph = services.accounts(), services.graph()

        def user(name: str) -> int:
            user_id = services.ids().next_id()
            repository.insert(user_id, name, f"{name}@example.com", hashed, name)
            accounts.profile(user_id)  # cached, as a live user's profile would be
            return user_id

        def friends(a: int, b: int) -> None:
            graph.follow(a, b)
            graph.follow(b, a)

        gina, gus, hub, dana = (user(f"gr_{name}") for name in ("gina", "gus", "hub", "dana"))
        crowd = [user(f"gr_c{i:03d}") for i in range(CROWD)]
        for other in crowd[:40]:
            graph.follow(gina, other)
        for other in crowd[20:60]:
            graph.follow(other, gina)
        for other in crowd[:30]:
            graph.follow(other, hub)

        # The friends graph: dana - d0, d1, d2; each d_i - e_i; e0 - g; x0 - x1 on their own.
        # dana also follows ten of the crowd one way (the friends Query filters them out).
        ds = [user(f"gr_d{i}") for i in range(3)]
        es = [user(f"gr_e{i}") for i in range(3)]
        g, x0, x1 = user("gr_g"), user("gr_x0"), user("gr_x1")
        for d, e in zip(ds, es, strict=True):
            friends(dana, d)
            friends(d, e)
        friends(es[0], g)
        friends(x0, x1)
        for other in crowd[60:70]:
            graph.follow(dana, other)

        return GraphUsers(
            viewer=accounts.login("gr_gina", PASSWORD, "bench"),
            target=gus,
            crowd=crowd,
            hub=hub,
            degree_viewer=accounts.login("gr_dana", PASSWORD, "bench"),
            degrees=[
                ("1st", ds[0], 1),
                ("2nd", es[0], 2),
                ("3rd", g, 3),
                ("unconnected", x0, None),
            ],
        )

    result: GraphUsers = run.resource("graph_users", build)
    return result


# ---- timing writes, and checking the requests ----------------------------------------------------


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Step:
    """A sampled op: ``action`` timed, with untimed set-up ``before`` and clean-up ``after``, so
    that a follow (or unfollow) can be measured over and over, each time doing real work."""

    action: Callable[[], Any]
    before: Callable[[], Any] = _nothing
    after: Callable[[], Any] = _nothing

    def __call__(self) -> int:
        self.before()
        start = time.perf_counter_ns()
        self.action()
        elapsed = time.perf_counter_ns() - start
        self.after()
        return elapsed

    def record(self) -> tuple[stack.StoreTrace, list[tuple[str, dict[str, Any]]]]:
        """The store round trips and the DynamoDB requests of one timed action."""
        self.before()
        with stack.trace_stores() as trace, dynamo_requests() as requests:
            self.action()
        self.after()
        return trace, requests


@contextmanager
def dynamo_requests() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The DynamoDB requests made inside the block, with their parameters."""
    import botocore.client

    seen: list[tuple[str, dict[str, Any]]] = []
    original = botocore.client.BaseClient.__dict__["_make_api_call"]

    def wrapped(self: Any, operation: str, params: Any) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            seen.append((operation, copy.deepcopy(params)))
        return original(self, operation, params)

    botocore.client.BaseClient._make_api_call = wrapped  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        botocore.client.BaseClient._make_api_call = original  # type: ignore[method-assign]


_SEQ = re.compile(r"[OI]T#(\d{19})")


def normalized(requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The requests without what changes from call to call: the request token, the seq minted
    for a follow, and how pynamodb splits a BatchGetItem's keys (it pops them off a set)."""
    shapes: list[Any] = []
    batch_keys: list[str] = []
    for operation, params in requests:
        params = {name: value for name, value in params.items() if name != "ClientRequestToken"}
        if operation == "BatchGetItem":
            params = copy.deepcopy(params)
            for table in params["RequestItems"].values():
                batch_keys += [json.dumps(k, sort_keys=True) for k in table["Keys"]]
                table["Keys"] = len(table["Keys"])
        shapes.append([operation, params])
    text = json.dumps([shapes, sorted(batch_keys)], sort_keys=True)
    for seq in set(_SEQ.findall(text)):
        text = text.replace(seq, "<seq>").replace(str(int(seq)), "<seq>")
    result: list[Any] = json.loads(text)
    return result


def request_differences(
    what: str, got: list[tuple[str, dict[str, Any]]], expected: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    (got_shapes, got_keys), (want_shapes, want_keys) = normalized(got), normalized(expected)
    if got_shapes == want_shapes and got_keys == want_keys:
        return []
    where = "the keys read"
    for i, (a, b) in enumerate(zip(got_shapes, want_shapes, strict=False)):
        if a != b:
            where = f"request {i + 1} ({a[0]})"
            break
    else:
        if len(got_shapes) != len(want_shapes):
            where = "the number of requests"
    return [
        f"{what}: the path's DynamoDB requests differ from its raw baseline's at {where}; "
        "update the baseline in bench/graph.py so the ratio compares like with like"
    ]


def same_requests(what: str, path: Callable[[], Any], raw: Callable[[], Any]) -> list[str]:
    with dynamo_requests() as got:
        path()
    with dynamo_requests() as expected:
        raw()
    return request_differences(what, got, expected)


def write_check(what: str, path: Step, raw: Step) -> list[str]:
    """``stack.compare_traces`` and ``same_requests`` for writes: each side's timed action is
    recorded once, between its own set-up and clean-up."""
    (got, got_requests), (expected, expected_requests) = path.record(), raw.record()
    if got.calls != expected.calls:
        return [
            f"{what}: the path now makes [{got}] but its raw baseline makes [{expected}]; "
            "update the baseline in bench/ so the ratio compares like with like"
        ]
    return request_differences(what, got_requests, expected_requests)


# ---- what every graph benchmark shares -----------------------------------------------------------


def in_sequence(*steps: Callable[[], Any]) -> Callable[[], None]:
    def run_all() -> None:
        for step in steps:
            step()

    return run_all


def handler_overhead(total: str) -> list[Callable[[Any], list[str]]]:
    return [Benchmark.difference("handler", total, "handler overhead over its store calls")]


@dataclass
class GraphBench:
    """The graph benchmarks' world: the users, the GraphFunction handler, the tables, a bare
    client of each store (configured like the app's) for the raw operations, and the two
    viewers' raw session checks."""

    who: GraphUsers
    handler: Callable[[dict[str, Any], Any], dict[str, Any]]
    table: str
    degrees_table: str
    raw: Any
    ddb: Any
    gina_session: Callable[[], Any]
    dana_session: Callable[[], Any]

    @property
    def gina(self) -> int:
        return int(self.who.viewer.user["id"])

    @property
    def dana(self) -> int:
        return int(self.who.degree_viewer.user["id"])

    def settle(self) -> None:
        """Before a check: renew the Snowflake worker lease and set the sessions' last-seen
        markers now, so that neither (once a minute or so) shows up in the traced call."""
        from warble import services

        services.ids().next_id()
        self.gina_session()
        self.dana_session()

    def raw_get(self, user_id: int) -> Callable[[], Any]:
        from warble import keys

        profile_key = keys.profile(user_id).value
        raw = self.raw
        if raw.get(profile_key) is None:
            raise RuntimeError(f"profile {user_id} is not cached")
        return lambda: raw.get(profile_key)

    def read_check(
        self, title: str, path: Callable[[], Any], raw_sequence: Callable[[], Any]
    ) -> Callable[[], list[str]]:
        def check() -> list[str]:
            self.settle()
            return stack.compare_traces(path, raw_sequence, title) or same_requests(
                title, path, raw_sequence
            )

        return check

    def raw_sets(self, others: list[int]) -> Callable[[], Any]:
        """The relationships' reads: does gina follow them (one HMGET of her set), does each
        follow her (one HMGET of each one's set), in one pipeline."""
        from warble import keys

        raw, gina = self.raw, self.gina

        def hmgets() -> Any:
            pipe = raw.pipeline(transaction=False)
            pipe.hmget(keys.memberships("following", gina).value, "*", *others)
            for other in others:
                pipe.hmget(keys.memberships("following", other).value, "*", gina)
            # The blocking, blocked_by and muting flags: one HMGET of gina's blocks hash.
            fields = [f"{kind}{other}" for other in others for kind in "bym"]
            pipe.hmget(keys.memberships("blocks", gina).value, "*", *fields)
            return pipe.execute()

        return hmgets


def graph_bench(run: Run) -> GraphBench:
    who = graph_users(run)
    bench_stack = stack.shared(run)
    raw, ddb = stack.raw_clients(run, bench_stack)
    return GraphBench(
        who=who,
        handler=stack.load_function("graph").handler,
        table=bench_stack.tables["GraphTable"],
        degrees_table=bench_stack.tables["DegreesTable"],
        raw=raw,
        ddb=ddb,
        gina_session=stack.session_check(raw, who.viewer),
        dana_session=stack.session_check(raw, who.degree_viewer),
    )


@group("graph", "follow/unfollow, statuses, a followers page and degrees (GraphFunction)")
def graph_group(run: Run) -> Iterator[Benchmark]:
    b = graph_bench(run)
    edge = FollowEdge(b)
    yield follow(b, edge)
    yield unfollow(b, edge)
    yield relationships(b)
    yield followers_page(b)
    yield from degrees(b)


# ---- follow and unfollow ----------------------------------------------------------------------


class FollowEdge:
    """gina's follow of gus (who does not follow her back) as warble.dal.graph writes it, in raw
    operations: the follow and the unfollow transactions of the edge with the seq minted last,
    the reads and cache writes around them, and the handler's two calls."""

    def __init__(self, b: GraphBench) -> None:
        from warble import keys, services
        from warble.dal.memberships import _APPLY
        from warble.settings import get_settings

        self._b = b
        self._services = services
        self.limit = get_settings().follow_limit
        self.seq = 0  # the seq of the edge the raw operations write next
        gina, gus = b.gina, b.who.target
        self.pair_keys = [key(gina, f"O#{padded(gus)}"), key(gina, f"I#{padded(gus)}")]
        self.changed = [
            keys.counts(gina),
            keys.first_page(gina, "following"),
            keys.first_page(gus, "followers"),
        ]
        self.apply_change = b.raw.register_script(_APPLY)
        self.gina_set = keys.memberships("following", gina)
        self.gus_profile = b.raw_get(gus)
        self.follow_call = expect(
            b.handler,
            stack.as_session(
                stack.with_path_id(stack.event("graph/follow.json"), "user_id", gus), b.who.viewer
            ),
            200,
        )
        self.unfollow_call = expect(
            b.handler,
            stack.as_session(
                stack.with_path_id(stack.event("graph/unfollow.json"), "user_id", gus),
                b.who.viewer,
            ),
            200,
        )

    def _absent_names(self) -> dict[str, Any]:
        return {
            "ConditionExpression": "attribute_not_exists (#0)",
            "ExpressionAttributeNames": {"#0": "pk"},
        }

    def follow_items(self, seq: int) -> list[dict[str, Any]]:
        """warble.dal.graph's follow of gus by gina, who is not followed back, in pynamodb's
        order (condition checks, deletes, puts, updates)."""
        table, gina, gus = self._b.table, self._b.gina, self._b.who.target

        def edge(owner: int, kind: str, other: int) -> dict[str, Any]:
            item = {
                **key(owner, f"{kind}#{padded(other)}"),
                "friend": {"BOOL": False},
                "seq": {"N": str(seq)},
                "uid": {"N": str(other)},
            }
            return {"Put": {"TableName": table, "Item": item, **self._absent_names()}}

        def listed(owner: int, kind: str, other: int) -> dict[str, Any]:
            item = {**key(owner, f"{kind}#{padded(seq)}"), "uid": {"N": str(other)}}
            return {"Put": {"TableName": table, "Item": item}}

        reverse = key(gus, f"O#{padded(gina)}")
        return [
            {"ConditionCheck": {"TableName": table, "Key": reverse, **self._absent_names()}},
            edge(gina, "O", gus),
            edge(gus, "I", gina),
            listed(gina, "OT", gus),
            listed(gus, "IT", gina),
            {
                "Update": {
                    "TableName": table,
                    "Key": key(gina, "META"),
                    "ConditionExpression": "(attribute_not_exists (#0) OR #0 < :0)",
                    "UpdateExpression": "ADD #0 :1",
                    "ExpressionAttributeNames": {"#0": "following_count"},
                    "ExpressionAttributeValues": {
                        ":0": {"N": str(self.limit)},
                        ":1": {"N": "1"},
                    },
                }
            },
        ]

    def unfollow_items(self, seq: int) -> list[dict[str, Any]]:
        """warble.dal.graph's unfollow of that edge, conditional on its seq and friend flag."""
        table, gina, gus = self._b.table, self._b.gina, self._b.who.target
        return [
            {
                "Delete": {
                    "TableName": table,
                    "Key": key(gina, f"O#{padded(gus)}"),
                    "ConditionExpression": "(#0 = :0 AND #1 = :1)",
                    "ExpressionAttributeNames": {"#0": "seq", "#1": "friend"},
                    "ExpressionAttributeValues": {":0": {"N": str(seq)}, ":1": {"BOOL": False}},
                }
            },
            {"Delete": {"TableName": table, "Key": key(gus, f"I#{padded(gina)}")}},
            {"Delete": {"TableName": table, "Key": key(gina, f"OT#{padded(seq)}")}},
            {"Delete": {"TableName": table, "Key": key(gus, f"IT#{padded(seq)}")}},
            {
                "Update": {
                    "TableName": table,
                    "Key": key(gina, "META"),
                    "ConditionExpression": "#0 > :0",
                    "UpdateExpression": "ADD #0 :1",
                    "ExpressionAttributeNames": {"#0": "following_count"},
                    "ExpressionAttributeValues": {":0": {"N": "0"}, ":1": {"N": "-1"}},
                }
            },
        ]

    def mint(self) -> None:
        self.seq = self._services.ids().next_id()

    def raw_follow(self) -> Any:
        return self._b.ddb.transact_write_items(
            TransactItems=self.follow_items(self.seq), ReturnConsumedCapacity="TOTAL"
        )

    def raw_unfollow(self) -> Any:
        return self._b.ddb.transact_write_items(
            TransactItems=self.unfollow_items(self.seq), ReturnConsumedCapacity="TOTAL"
        )

    def mint_and_follow(self) -> None:
        self.mint()
        self.raw_follow()  # fails (TransactionCanceled) if the edge is still there

    def remove_written_edge(self) -> None:
        """After the handler's follow: its edge must exist; remove it (with its seq)."""
        found = self._b.ddb.get_item(
            TableName=self._b.table,
            Key=key(self._b.gina, f"O#{padded(self._b.who.target)}"),
            ConsistentRead=True,
        ).get("Item")
        if found is None:
            raise RuntimeError("the follow wrote no edge")
        self.seq = int(found["seq"]["N"])
        self.raw_unfollow()

    def raw_pair(self) -> Any:
        return self._b.ddb.batch_get_item(
            RequestItems={self._b.table: {"ConsistentRead": True, "Keys": self.pair_keys}},
            ReturnConsumedCapacity="TOTAL",
        )

    def raw_invalidate(self) -> None:
        for cache_key in self.changed:
            self._b.raw.delete(cache_key.value, cache_key.lease)

    def raw_apply(self) -> Any:  # the follow's change to gina's following set (one EVALSHA)
        return self.apply_change(
            keys=[self.gina_set.value, self.gina_set.lease],
            args=[self._b.who.target, f"{self.seq:019d}a"],
        )


def follow(b: GraphBench, edge: FollowEdge) -> Benchmark:
    return follow_write(
        b,
        edge,
        "PUT /v1/users/me/following/{id}: follow (GraphFunction handler)",
        path=Step(edge.follow_call, after=edge.remove_written_edge),
        headline=Step(edge.raw_follow, before=edge.mint, after=edge.raw_unfollow),
        write=edge.raw_follow,
        setup=edge.mint,
        cleanup=edge.raw_unfollow,
        baseline="raw TransactWriteItems, the same 6 actions (4 Put, Update, check)",
        pair=Step(edge.raw_pair),
        work="timed from no edge; the edge written is removed untimed afterwards",
    )


def unfollow(b: GraphBench, edge: FollowEdge) -> Benchmark:
    return follow_write(
        b,
        edge,
        "DELETE /v1/users/me/following/{id}: unfollow (GraphFunction handler)",
        path=Step(edge.unfollow_call, before=edge.mint_and_follow),
        headline=Step(edge.raw_unfollow, before=edge.mint_and_follow),
        write=edge.raw_unfollow,
        setup=edge.mint_and_follow,
        cleanup=_nothing,
        baseline="raw TransactWriteItems, the same 5 actions (4 Delete, Update)",
        # finds the edge
        pair=Step(edge.raw_pair, before=edge.mint_and_follow, after=edge.raw_unfollow),
        work="an untimed raw follow first, then the timed unfollow",
    )


def follow_write(
    b: GraphBench,
    edge: FollowEdge,
    title: str,
    *,
    path: Step,
    headline: Step,
    write: Callable[[], Any],
    setup: Callable[[], Any],
    cleanup: Callable[[], Any],
    baseline: str,
    pair: Step,
    work: str,
) -> Benchmark:
    """A follow's or an unfollow's benchmark: each sample does real work, its set-up and
    clean-up untimed, and the raw rows alike."""
    sequence = in_sequence(
        b.gina_session, edge.gus_profile, edge.raw_pair, write, edge.raw_apply, edge.raw_invalidate
    )
    raw_sum = Step(sequence, before=setup, after=cleanup)
    total = (
        "raw sum, in sequence: session check + GET + BatchGetItem + TransactWriteItems + "
        "EVALSHA + 3 DEL"
    )

    def check() -> list[str]:
        b.settle()
        return write_check(title, path, raw_sum)

    return Benchmark(
        title,
        path,
        headline,
        path="handler",
        baseline=baseline,
        breakdown=[
            ("raw BatchGetItem of the edge pair (2 keys)", pair),
            ("raw 3 DEL (counts and first-page caches)", Step(edge.raw_invalidate)),
            (total, raw_sum),
        ],
        floor=total,
        sampled=True,
        budget_s=6.0,
        warmup=10,
        min_iterations=60,
        max_iterations=1000,
        check=check,
        describe=lambda: [f"round trips of one call: {path.record()[0]}"],
        summarize=handler_overhead(total),
        notes=[
            "each sample does real work: "
            + work
            + " (the raw rows alike). DynamoDB is a moto server on localhost, far slower "
            "than the real service: compare the handler with the raw sum"
        ],
    )


# ---- relationship statuses of 100 users ---------------------------------------------------------


def relationships(b: GraphBench) -> Benchmark:
    from warble import services

    who, gina, ddb, table = b.who, b.gina, b.ddb, b.table
    call = expect(
        b.handler,
        stack.as_session(
            with_query(
                stack.event("graph/relationships.json"),
                ids=",".join(str(uid) for uid in who.crowd),
            ),
            who.viewer,
        ),
        200,
    )
    statuses = [item["status"] for item in body(call())["items"]]
    if len(statuses) != CROWD or {*statuses} != {"friends", "following", "followed_by", "none"}:
        raise RuntimeError(f"unexpected statuses: {statuses}")
    status_keys = [key(gina, f"{kind}#{padded(uid)}") for uid in who.crowd for kind in "OI"]

    def raw_statuses(keys_: list[dict[str, Any]]) -> Callable[[], Any]:
        def batch_get() -> Any:
            answer = ddb.batch_get_item(
                RequestItems={
                    table: {
                        "ConsistentRead": True,
                        "ProjectionExpression": "#0, #1",
                        "ExpressionAttributeNames": {"#0": "pk", "#1": "sk"},
                        "Keys": keys_,
                    }
                },
                ReturnConsumedCapacity="TOTAL",
            )
            if answer.get("UnprocessedKeys"):
                raise RuntimeError("BatchGetItem left keys unprocessed")
            return answer

        return batch_get

    first_half, second_half = raw_statuses(status_keys[:100]), raw_statuses(status_keys[100:])
    both_halves = in_sequence(first_half, second_half)
    for uid in who.crowd:  # each user's own activity has their following set in Redis
        services.graph().relationships(uid, [gina])

    crowd_sets = b.raw_sets(who.crowd)
    sequence = in_sequence(b.gina_session, crowd_sets)
    title = "GET /v1/users/me/relationships, 100 ids (GraphFunction handler)"
    total = "raw sum, in sequence: session check + pipeline of 102 HMGET"
    return Benchmark(
        title,
        call,
        crowd_sets,
        path="handler",
        baseline="raw pipeline of 102 HMGET (gina's following set, each user's, gina's blocks)",
        breakdown=[
            (total, sequence),
            ("raw 2 BatchGetItem of the 200 edge keys (what the path read before)", both_halves),
        ],
        floor=total,
        budget_s=5.0,
        warmup=10,
        min_iterations=60,
        max_iterations=2000,
        check=b.read_check(title, call, sequence),
        describe=lambda: [f"round trips of one call: {stack.traced(call)}"],
        summarize=handler_overhead(total),
        notes=[
            "the following sets of gina and of the 100 users are in Redis (each user's own "
            "reads rebuild theirs); the 100 users mix friends, following, followed_by and none"
        ],
    )


# ---- a followers page of 20, warm caches ------------------------------------------------------


def followers_page(b: GraphBench) -> Benchmark:
    from warble import keys

    who, gina, hub, raw, ddb = b.who, b.gina, b.who.hub, b.raw, b.ddb
    followers = expect(
        b.handler,
        stack.as_session(
            with_query(
                stack.with_path_id(stack.event("graph/followers.json"), "user_id", hub),
                limit=str(PAGE),
            ),
            who.viewer,
        ),
        200,
    )
    page = body(followers())  # fills the counts caches (the profiles are cached already)
    follower_ids = [int(item["id"]) for item in page["items"]]
    if len(follower_ids) != PAGE or not page["next_cursor"]:
        raise RuntimeError(f"unexpected followers page: {page}")
    page_query = {
        "TableName": b.table,
        "KeyConditionExpression": "(#0 = :0 AND begins_with (#1, :1))",
        "ConsistentRead": True,
        "Limit": PAGE + 1,
        "ScanIndexForward": False,
        "ExpressionAttributeNames": {"#0": "pk", "#1": "sk"},
        "ExpressionAttributeValues": {":0": {"S": f"U#{hub}"}, ":1": {"S": "IT#"}},
        "ReturnConsumedCapacity": "TOTAL",
    }
    profile_keys = [keys.profile(uid).value for uid in follower_ids]
    counts_keys = [keys.counts(uid).value for uid in follower_ids]
    hub_counts = [keys.counts(hub).value]
    for cached in (profile_keys, counts_keys, hub_counts):
        if None in raw.mget(cached):
            raise RuntimeError("the followers page's caches are not warm")

    def raw_query() -> Any:
        answer = ddb.query(**page_query)
        if len(answer["Items"]) != PAGE + 1:
            raise RuntimeError("the raw Query did not read a full page")
        return answer

    def raw_profiles() -> Any:
        return raw.mget(profile_keys)

    def raw_hub_counts() -> Any:  # GraphService.counts: a pipeline of one MGET
        pipe = raw.pipeline(transaction=False)
        pipe.mget(hub_counts)
        return pipe.execute()

    page_sets = b.raw_sets(follower_ids)

    def raw_page_reads() -> Any:  # the Users' profiles, counts and relationships: one pipeline
        pipe = raw.pipeline(transaction=False)
        pipe.mget(profile_keys)
        pipe.mget(counts_keys)
        pipe.hmget(keys.memberships("following", gina).value, "*", *follower_ids)
        for other in follower_ids:
            pipe.hmget(keys.memberships("following", other).value, "*", gina)
        return pipe.execute()

    query_and_profiles = in_sequence(raw_query, raw_profiles)
    sequence = in_sequence(
        b.gina_session, b.raw_get(hub), raw_hub_counts, raw_query, raw_page_reads
    )
    title = f"GET /v1/users/{{id}}/followers?limit={PAGE}, warm caches (GraphFunction handler)"
    total = "raw sum, in sequence: session check + GET + counts pipeline + Query + reads pipeline"
    return Benchmark(
        title,
        followers,
        query_and_profiles,
        path="handler",
        baseline=f"raw Query + raw MGET of the {PAGE} profiles",
        breakdown=[
            (f"raw Query, Limit {PAGE + 1} (the page and one more)", raw_query),
            (f"raw MGET of the {PAGE} cached profiles", raw_profiles),
            (f"raw pipeline of the {PAGE + 1} relationship HMGETs alone", page_sets),
            (total, sequence),
        ],
        floor=total,
        budget_s=6.0,
        warmup=10,
        min_iterations=60,
        max_iterations=2000,
        check=b.read_check(title, followers, sequence),
        describe=lambda: [f"round trips of one call: {stack.traced(followers)}"],
        summarize=handler_overhead(total),
        notes=[
            f"gina reads the newest {PAGE} of the hub's 30 followers: each User carries its "
            "profile, counts and gina's relationship, read in one pipeline (MGET, MGET, "
            f"{PAGE + 1} HMGET)"
        ],
    )


# ---- degrees ----------------------------------------------------------------------------------


def degrees(b: GraphBench) -> Iterator[Benchmark]:
    """A degree query for each of dana's targets: 1st, 2nd, 3rd, unconnected."""
    for label, target, expected in b.who.degrees:
        yield degree(b, label, target, expected)


def degree(b: GraphBench, label: str, target: int, expected: int | None) -> Benchmark:
    from warble import keys, services

    ddb, table, dana = b.ddb, b.table, b.dana

    def friends_query(user_id: int) -> Callable[[], Any]:
        params = {
            "TableName": table,
            "KeyConditionExpression": "(#0 = :0 AND begins_with (#1, :1))",
            "FilterExpression": "#2 = :2",
            "ProjectionExpression": "#1, #3",
            "ConsistentRead": True,
            "ExpressionAttributeNames": {"#0": "pk", "#1": "sk", "#2": "friend", "#3": "uid"},
            "ExpressionAttributeValues": {
                ":0": {"S": f"U#{user_id}"},
                ":1": {"S": "O#"},
                ":2": {"BOOL": True},
            },
            "ReturnConsumedCapacity": "TOTAL",
        }
        return lambda: ddb.query(**params)

    first_friend = b.who.degrees[0][1]

    def raw_get_item() -> Any:
        return ddb.get_item(
            TableName=table, Key=key(dana, f"O#{padded(first_friend)}"), ConsistentRead=True
        )

    call = expect(
        b.handler,
        stack.as_session(
            stack.with_path_id(stack.event("graph/degree.json"), "user_id", target),
            b.who.degree_viewer,
        ),
        200,
    )
    got = body(call())["degree"]
    if got != expected:
        raise RuntimeError(f"degree of the {label} target: expected {expected}, got {got}")
    reads = [friends_query(dana)]  # the viewer's friends answer a 1st
    if expected != 1:
        reads.append(friends_query(target))  # theirs: a common friend is a 2nd
    if expected != 1 and expected != 2:
        # the viewer's second-degree set: computed on the first call, then read from its cache
        # (one MGET in a pipeline, as the cache reads it)
        cached = keys.degree2(dana).value

        def raw_set() -> Any:
            pipe = b.raw.pipeline(transaction=False)
            pipe.mget([cached])
            return pipe.execute()

        reads.append(raw_set)
    sequence = in_sequence(b.dana_session, b.raw_get(target), *reads)
    title = f"GET /v1/users/me/degree/{{id}}, {label} target (GraphFunction handler)"
    queries = len(reads) - (expected not in (1, 2))
    cache = " + the set's MGET" if expected not in (1, 2) else ""
    total = f"raw sum, in sequence: pipeline + GET + {queries} Query{cache}"

    def describe() -> list[str]:
        trace = stack.traced(call)
        dynamo = sum(1 for name in trace.calls if name.startswith("dynamodb "))
        store = services.graph()._store
        before = store.reads
        services.graph().degree(dana, target)
        counted = store.reads - before
        return [
            f"store reads: {dynamo} DynamoDB {'read' if dynamo == 1 else 'reads'} "
            f"(the graph store counts {counted}); all round trips of one call: {trace}"
        ]

    return Benchmark(
        title,
        call,
        raw_get_item,
        path="handler",
        baseline="raw GetItem (one store read)",
        breakdown=[(total, sequence)],
        floor=total,
        budget_s=3.0,
        warmup=10,
        min_iterations=50,
        max_iterations=2000,
        check=b.read_check(title, call, sequence),
        describe=describe,
        summarize=handler_overhead(total),
        notes=[
            "dana has 3 friends (and follows 10 users one way); each friend has a friend "
            "of their own, one of whom has a friend of theirs; the unconnected target is "
            "one of two friends apart from everyone (a target with no friends at all would "
            "take 2 reads, not 3). A 3rd reads the viewer's second-degree set from its cache"
        ]
        if expected == 1
        else [],
    )
