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


@group("accounts", "profile read (warm cache) and login, through the AccountsFunction handler")
def accounts_group(run: Run) -> Iterator[Benchmark]:
    import bcrypt
    import psycopg
    from warble import keys, services
    from warble.dal.rate_limit import _GIVE_BACK, _TAKE
    from warble.domain.rate_limits import client_network
    from warble.settings import get_settings

    who = people(run)
    handler = stack.load_function("accounts").handler
    alice_id, bob_id = int(who.alice.user["id"]), int(who.bob.user["id"])

    # A bare client of each store, configured like the app's, for the raw operations.
    raw, _ = stack.raw_clients(run, who.stack)
    pg = psycopg.connect(
        f"host=127.0.0.1 user=postgres dbname={stack.BENCH_DB} sslmode=disable", autocommit=True
    )
    run.cleanups.append(pg.close)

    # ---- GET /v1/users/{id}, warm cache ---------------------------------------------------

    def get_user_benchmark(target: int, title: str, note: str) -> Benchmark:
        get_user = expect(handler, who.get_user_event(target), 200)
        get_user()  # fills the profile and counts caches
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
            get_user,
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
            check=lambda: stack.compare_traces(get_user, raw_sequence, title),
            describe=lambda: [f"round trips of one warm call: {stack.traced(get_user)}"],
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

    yield get_user_benchmark(
        bob_id,
        "GET /v1/users/{id} of another user, warm cache (AccountsFunction handler)",
        "alice reads bob, whom she follows: the relationship is two HMGETs of the following "
        "sets, sent with the profile and counts reads (no DynamoDB call)",
    )
    yield get_user_benchmark(
        alice_id,
        "GET /v1/users/{id} of oneself, warm cache (no relationship lookup)",
        "the same route with the caller's own id (no relationship)",
    )

    # ---- login ----------------------------------------------------------------------------
    accounts = services.accounts()
    reserve = raw.register_script(_TAKE)
    release = raw.register_script(_GIVE_BACK)
    settings = get_settings()
    settings_max, settings_window = settings.login_max_failures, settings.login_window_seconds
    login_address = client_network(login_event("alice")["requestContext"]["http"]["sourceIp"])
    address_budget = stack.budget_spend(raw, keys.rate_limit("login", login_address))

    def login_store_ops(login: str, user_id: int) -> Callable[[], None]:
        failures = keys.login_failures(f"user:{user_id}")
        raw.delete(failures)
        profile = keys.profile(user_id).value
        counts = keys.counts(user_id).value
        expires = datetime.now(UTC) + timedelta(days=30)

        def ops() -> None:
            address_budget()
            pg.execute(
                'SELECT id, password_hash FROM users WHERE lower(username COLLATE "C") = %s',
                (login.lower(),),
            ).fetchone()
            reserve(keys=[failures], args=[settings_max, settings_window * 1000])
            release(keys=[failures])
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

    def password_hash(user_id: int) -> bytes:
        row = pg.execute("SELECT password_hash FROM users WHERE id = %s", (user_id,)).fetchone()
        assert row is not None
        return str(row[0]).encode()

    def login_benchmark(login: str, user_id: int, cost: int, budget: float, n: int) -> Benchmark:
        hashed = password_hash(user_id)
        assert hashed.startswith(f"$2b${cost:02d}$".encode()), hashed[:7]
        do_login = expect(handler, login_event(login), 200)
        store_ops = login_store_ops(login, user_id)

        def raw_bcrypt() -> None:
            if not bcrypt.checkpw(PASSWORD.encode(), hashed):
                raise RuntimeError("bcrypt check failed")

        def bcrypt_and_ops() -> None:
            raw_bcrypt()
            store_ops()

        def service_login() -> Any:
            return accounts.login(login, PASSWORD, "bench")

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

    yield login_benchmark("alice", alice_id, 12, 9.0, 12)
    yield login_benchmark("carol", who.carol_id, 4, 4.0, 150)
