"""Accounts: a profile read with a warm cache, and login, against the raw store operations.

``GET /v1/users/{id}`` goes through the real AccountsFunction handler with an event built from
events/accounts/get-user.json that carries a real session's token; the viewer
(alice) follows the user read (bob), so the relationship lookup finds an edge. Its headline
baseline is the raw Redis GET of the cached profile; the breakdown times each store round trip
the path makes, alone and in sequence (the store cost of the path: the rest is handler overhead):
the session check (GET, pipeline, EVALSHA) and one pipeline of the route's reads (profile,
counts, and the two following sets' HMGETs for another user).

Login goes through the handler too (``POST /v1/auth/login``, events/accounts/login.json), only
ever successfully, so the failed-login limiter never answers 429. It is compared with a raw
bcrypt check of the same hash: at the production cost (12), and at the tests' cost (4).
"""

from __future__ import annotations

import base64
import copy
import json
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench import stack
from bench.harness import Benchmark, Run, group

PASSWORD = "correct horse battery staple"


@dataclass
class People:
    """Who the accounts benchmarks act as; built once per run (the cold-start group uses it)."""

    stack: stack.Stack
    alice: Any  # IssuedSession: the viewer, password hashed at cost 12
    bob: Any  # IssuedSession: the user read; alice follows bob
    carol_id: int  # password hashed at cost 4
    follows: bool

    def get_user_event(self, user_id: int | None = None) -> dict[str, Any]:
        """GET /v1/users/{user_id} (bob by default) as alice."""
        target = self.bob.user["id"] if user_id is None else user_id
        evt = stack.with_path_id(stack.event("accounts/get-user.json"), "user_id", target)
        return stack.as_session(evt, self.alice)


def people(run: Run) -> People:
    def build() -> People:
        bench_stack = stack.shared(run)
        from warble import security, services
        from warble.dal.accounts import UserRepository

        accounts = services.accounts()
        alice = accounts.signup("alice", "alice@example.com", PASSWORD, "Alice", "bench")
        bob = accounts.signup("bob", "bob@example.com", PASSWORD, "Bob", "bench")
        carol_id = services.ids().next_id()
        # The tests' cost: signup hashes at PASSWORD_HASH_ROUNDS (12 here).
        UserRepository(services.container().database).insert(
            carol_id, "carol", "carol@example.com", security.hash_password(PASSWORD, 4), "Carol"
        )
        follows = hasattr(services, "graph")
        if follows:
            services.graph().follow(alice.user["id"], bob.user["id"])
        return People(bench_stack, alice, bob, carol_id, follows)

    result: People = run.resource("people", build)
    return result


def expect(handler: Any, evt: dict[str, Any], status: int) -> Callable[[], Any]:
    """A call of the handler that fails loudly if the answer is not ``status``: a benchmark of
    a 401, 429 or 503 would be fast and wrong."""
    ctx = stack.Context()

    def call() -> Any:
        answer = handler(evt, ctx)
        if answer["statusCode"] != status:
            raise RuntimeError(f"expected {status}, got {answer}")
        return answer

    return call


def login_event(login: str) -> dict[str, Any]:
    evt = copy.deepcopy(stack.event("accounts/login.json"))
    body = {"login": login, "password": PASSWORD, "device": "bench"}
    evt["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    evt["isBase64Encoded"] = True
    return evt


@dataclass
class AccountsBench:
    """What the accounts benchmarks share: the people, the AccountsFunction handler and a bare
    client of Redis and of PostgreSQL, configured like the app's, for the raw operations."""

    who: People
    handler: Any
    raw: Any
    pg: Any

    @property
    def alice_id(self) -> int:
        return int(self.who.alice.user["id"])

    @property
    def bob_id(self) -> int:
        return int(self.who.bob.user["id"])


@group("accounts", "profile read (warm cache) and login, through the AccountsFunction handler")
def accounts_group(run: Run) -> Iterator[Benchmark]:
    import psycopg

    who = people(run)
    handler = stack.load_function("accounts").handler
    raw, _ = stack.raw_clients(run, who.stack)
    pg = psycopg.connect(
        f"host=127.0.0.1 user=postgres dbname={stack.BENCH_DB} sslmode=disable", autocommit=True
    )
    run.cleanups.append(pg.close)
    a = AccountsBench(who, handler, raw, pg)
    yield get_another_user(a)
    yield get_oneself(a)
    logins = LoginStoreCalls(a)
    yield login_at_production_cost(a, logins)
    yield login_at_tests_cost(a, logins)


# ---- GET /v1/users/{id}, warm cache ---------------------------------------------------------


def get_another_user(a: AccountsBench) -> Benchmark:
    return get_user(
        a,
        a.bob_id,
        "GET /v1/users/{id} of another user, warm cache (AccountsFunction handler)",
        "alice reads bob, whom she follows: the relationship is two HMGETs of the following "
        "sets, sent with the profile and counts reads (no DynamoDB call)",
    )


def get_oneself(a: AccountsBench) -> Benchmark:
    return get_user(
        a,
        a.alice_id,
        "GET /v1/users/{id} of oneself, warm cache (no relationship lookup)",
        "the same route with the caller's own id (no relationship)",
    )


def get_user(a: AccountsBench, target: int, title: str, note: str) -> Benchmark:
    from warble import keys, services

    raw, alice_id, who = a.raw, a.alice_id, a.who
    call = expect(a.handler, who.get_user_event(target), 200)
    call()  # fills the profile and counts caches
    profile_key, counts_key = keys.profile(target).value, keys.counts(target).value

    def raw_profile_get() -> Any:
        return raw.get(profile_key)

    def queue_reads(pipe: Any) -> Any:
        # The route's reads: the profile, its counts and, for another user, the two
        # following sets' answers (alice follows bob? bob follows alice?).
        pipe.mget([profile_key])
        pipe.mget([counts_key])
        if target != alice_id:
            pipe.hmget(keys.memberships("following", alice_id).value, "*", target)
            pipe.hmget(keys.memberships("following", target).value, "*", alice_id)

    def raw_reads() -> Any:
        pipe = raw.pipeline(transaction=False)
        queue_reads(pipe)
        return pipe.execute()

    # The round trips the path makes today, in its order (the check below says when the
    # handler stops matching them): the gate and the reads in one pipeline.
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("gate + reads", stack.session_check(raw, who.alice, queue_reads)),
    ]

    def raw_sequence() -> None:
        for _, step in steps:
            step()

    def services_only() -> Any:
        # The route's work without the HTTP layer: the gate and the read in one batch.
        accounts = services.accounts()
        batch = accounts.batch()
        gate = accounts.gate_later(batch, who.alice.token, services.rate_limits().per_user)
        read = services.graph().user_later(batch, alice_id, target)
        batch.run()
        gate()
        return read()  # the User as the viewer sees it, built by the service

    def read_only() -> Any:
        # The read itself: profile, counts and relationship (no session check, no HTTP).
        return services.graph().user(alice_id, target)

    reads = "profile, counts" + (" and 2 following-set HMGETs" if target != alice_id else "")
    total = f"raw, one pipeline: gate EVALSHA + {reads}"
    return Benchmark(
        title,
        call,
        raw_profile_get,
        path="handler",
        baseline="raw GET profile",
        floor=total,
        breakdown=[
            (f"raw pipeline ({reads}) alone", raw_reads),
            (total, raw_sequence),
            ("services called directly (no HTTP layer)", services_only),
            ("GraphService.user alone (the read: no session check, no HTTP layer)", read_only),
        ],
        budget_s=8.0,
        warmup=100,
        min_iterations=200,
        max_iterations=3000,
        check=lambda: stack.compare_traces(call, raw_sequence, title),
        describe=lambda: [f"round trips of one warm call: {stack.traced(call)}"],
        summarize=[
            Benchmark.difference("handler", total, "handler overhead over its store calls"),
            Benchmark.difference(
                "handler",
                "services called directly (no HTTP layer)",
                "of which the HTTP layer (skeleton, routing, validation, encoding)",
            ),
        ],
        notes=[note],
    )


# ---- login ----------------------------------------------------------------------------------


class LoginStoreCalls:
    """The store calls of a successful login, made raw: the address's budget, the failed-login
    throttle taken and given back, the credentials read, the profile, the session inserted and
    the User's counts."""

    def __init__(self, a: AccountsBench) -> None:
        from warble import keys
        from warble.dal.rate_limit import _GIVE_BACK, _TAKE
        from warble.domain.rate_limits import client_network
        from warble.settings import get_settings

        self._a = a
        raw = a.raw
        self.reserve = raw.register_script(_TAKE)
        self.release = raw.register_script(_GIVE_BACK)
        settings = get_settings()
        self.max_failures, self.window = settings.login_max_failures, settings.login_window_seconds
        address = client_network(login_event("alice")["requestContext"]["http"]["sourceIp"])
        self.address_budget = stack.budget_spend(raw, keys.rate_limit("login", address))
        for name in ("alice", "carol"):
            raw.delete(keys.login_failures(name))

    def of(self, login: str, user_id: int) -> Callable[[], None]:
        from warble import keys

        raw, pg = self._a.raw, self._a.pg
        failures = keys.login_failures(login)
        profile = keys.profile(user_id).value
        counts = keys.counts(user_id).value
        expires = datetime.now(UTC) + timedelta(days=30)

        def ops() -> None:
            self.address_budget()
            self.reserve(keys=[failures], args=[self.max_failures, self.window * 1000])
            pg.execute(
                "SELECT id, password_hash FROM users WHERE lower(username) = lower(%s)", (login,)
            ).fetchone()
            self.release(keys=[failures])
            raw.get(profile)
            pg.execute(
                "INSERT INTO sessions (id, user_id, token_hash, device, expires_at)"
                " VALUES (%s, %s, %s, %s, %s) RETURNING *",
                (secrets.randbits(62), user_id, secrets.token_bytes(32), "bench", expires),
            ).fetchone()
            pipe = raw.pipeline(transaction=False)  # the User carries its counts (cached)
            pipe.mget([counts])
            pipe.execute()

        return ops

    def password_hash(self, user_id: int) -> bytes:
        row = self._a.pg.execute(
            "SELECT password_hash FROM users WHERE id = %s", (user_id,)
        ).fetchone()
        assert row is not None
        return str(row[0]).encode()


def login_at_production_cost(a: AccountsBench, logins: LoginStoreCalls) -> Benchmark:
    return login(a, logins, "alice", a.alice_id, 12, 9.0, 12)


def login_at_tests_cost(a: AccountsBench, logins: LoginStoreCalls) -> Benchmark:
    return login(a, logins, "carol", a.who.carol_id, 4, 4.0, 150)


def login(
    a: AccountsBench,
    logins: LoginStoreCalls,
    name: str,
    user_id: int,
    cost: int,
    budget: float,
    n: int,
) -> Benchmark:
    import bcrypt
    from warble import services

    hashed = logins.password_hash(user_id)
    assert hashed.startswith(f"$2b${cost:02d}$".encode()), hashed[:7]
    do_login = expect(a.handler, login_event(name), 200)
    store_ops = logins.of(name, user_id)

    def raw_bcrypt() -> None:
        if not bcrypt.checkpw(PASSWORD.encode(), hashed):
            raise RuntimeError("bcrypt check failed")

    def bcrypt_and_ops() -> None:
        raw_bcrypt()
        store_ops()

    accounts = services.accounts()

    def service_login() -> Any:
        return accounts.login(name, PASSWORD, "bench")

    breakdown: list[tuple[str, Callable[[], Any]]] = [
        ("raw store calls of login, in sequence", store_ops),
    ]
    if cost < 12:  # at cost 12 these differ from bcrypt alone by noise: save the time
        breakdown.append(("raw bcrypt + raw store calls, in sequence", bcrypt_and_ops))
        breakdown.append(("AccountService.login (no HTTP layer)", service_login))
    production = " (production)" if cost == 12 else " (tests)"
    return Benchmark(
        f"POST /v1/auth/login, bcrypt cost {cost}{production}",
        do_login,
        raw_bcrypt,
        path="handler",
        baseline=f"raw bcrypt.checkpw, cost {cost}",
        breakdown=breakdown,
        floor="raw bcrypt + raw store calls, in sequence" if cost < 12 else None,
        budget_s=budget,
        warmup=2 if cost == 12 else 20,
        min_iterations=n,
        max_iterations=500,
        rounds=3 if cost == 12 else 5,
        check=lambda: stack.compare_traces(do_login, store_ops, "POST /v1/auth/login"),
        describe=lambda: [f"round trips of one login: {stack.traced(do_login)}"],
        summarize=[
            Benchmark.difference(
                "handler", f"raw bcrypt.checkpw, cost {cost}", "login beyond bcrypt"
            )
        ]
        if cost < 12
        else [],
        notes=[
            "the production cost: bcrypt is nearly all of a login; with this few samples "
            "the handler-minus-bcrypt difference is within noise (the cost-4 run shows it)"
        ]
        if cost == 12
        else [],
    )
