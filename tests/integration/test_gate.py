"""The HTTP gate in one round trip (warble.http.app): a token names its user, so the session
check, the user's budget and the route's first reads travel together; a token that fails the
check gets 401 and nothing of what was read for it: no answer, no miss loaded, no budget spent.
Through the real handlers on the single node and on the cluster (``redis`` marker)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from warble import keys, security, services
from warble.dal.accounts import SessionRepository

from tests.integration.test_sample_events import Context, _event, _load_function

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def _get_user(handler, token: str, user_id: int) -> dict:
    event = _event("accounts/get-user.json")
    event["headers"]["authorization"] = f"Bearer {token}"
    old = event["pathParameters"]["user_id"]
    event["pathParameters"]["user_id"] = str(user_id)
    event["rawPath"] = event["rawPath"].replace(old, str(user_id))
    return handler(event, Context())


def test_a_token_names_its_user_and_only_its_hash_is_stored(accounts, pg):
    issued = accounts.signup("tara", "tara@example.com", "correct horse", None, "phone")
    found = re.fullmatch(r"wbl_([0-9]+)_([A-Za-z0-9_-]{43})", issued.token)
    assert found and int(found.group(1)) == issued.user["id"]
    assert len(base64.urlsafe_b64decode(found.group(2) + "=")) == 32  # 256 random bits
    assert security.token_user(issued.token) == issued.user["id"]
    stored = pg.execute("SELECT token_hash FROM sessions WHERE id = %s", (issued.session.id,))
    assert bytes(stored.fetchone()[0]) == hashlib.sha256(issued.token.encode()).digest()


@pytest.mark.parametrize("kind", ["revoked", "expired", "forged", "another's id", "malformed"])
def test_a_refused_token_reads_nothing_for_its_caller(accounts, pg, redis, kind):
    """Given bob's profile not cached (a read would load it and fill the cache), a request with
    a bad token naming alice gets 401; bob's profile stays unread and alice's budget unspent.
    The same request with her live token fills the cache: the check can see a read."""
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    bob = accounts.signup("bob", "bob@example.com", "correct horse", None, "phone")
    alice_id, bob_id = alice.user["id"], bob.user["id"]
    handler = _load_function("accounts").handler
    secret = alice.token.rsplit("_", 1)[1]
    token = {
        "revoked": alice.token,
        "expired": alice.token,
        "forged": f"wbl_{alice_id}_{'A' * 43}",
        "another's id": f"wbl_{bob_id}_{secret}",  # a live secret under another user's id
        "malformed": f"wbl_{alice_id}_{secret[:20]}",
    }[kind]
    assert _get_user(handler, alice.token, alice_id)["statusCode"] == 200  # session cached
    if kind == "revoked":
        accounts.revoke(accounts.require_token(alice.token), alice.session.id)
    if kind == "expired":
        past = datetime.now(UTC) - timedelta(seconds=1)
        pg.execute("UPDATE sessions SET expires_at = %s WHERE id = %s", (past, alice.session.id))
        # The cached session too: its expiry has come.
        cached = keys.session(security.token_hash(alice.token).hex(), alice_id).value
        record = json.loads(redis.get(cached))
        redis.set(cached, json.dumps({**record, "expires_at_ms": int(past.timestamp() * 1000)}))
    for key in (keys.profile(bob_id).value, keys.user_budget(alice_id), keys.user_budget(bob_id)):
        redis.delete(key)

    answer = _get_user(handler, token, bob_id)

    assert answer["statusCode"] == 401
    assert "bob" not in answer["body"]
    assert redis.exists(keys.profile(bob_id).value, keys.profile(bob_id).lease) == 0
    assert redis.exists(keys.user_budget(alice_id)) == redis.exists(keys.user_budget(bob_id)) == 0
    if kind in ("revoked", "expired"):
        return
    live = _get_user(handler, alice.token, bob_id)
    assert live["statusCode"] == 200 and '"username":"bob"' in live["body"]
    assert redis.exists(keys.profile(bob_id).value) == 1
    assert redis.get(keys.user_budget(alice_id)) == "1"


def test_a_forged_token_does_not_rebuild_the_named_users_home_timeline(accounts, redis):
    """The home page's first reads go with the gate; a miss of the timeline (a rebuild, which
    writes) is handled only for a caller the gate admitted."""
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    alice_id = alice.user["id"]
    handler = _load_function("tweets").handler
    event = _event("tweets/home.json")
    event["headers"]["authorization"] = f"Bearer wbl_{alice_id}_{'B' * 43}"

    assert handler(event, Context())["statusCode"] == 401
    assert redis.exists(keys.home_timeline(alice_id)) == 0

    event["headers"]["authorization"] = f"Bearer {alice.token}"
    assert handler(event, Context())["statusCode"] == 200
    assert redis.exists(keys.home_timeline(alice_id)) == 1  # rebuilt for the admitted caller


def _unread_counts_event(token: str) -> dict:
    event = _event("graph/followers.json")
    path = "/v1/notifications/unread-counts"
    event["routeKey"] = event["requestContext"]["routeKey"] = f"GET {path}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["rawQueryString"] = ""
    event.pop("queryStringParameters", None)
    event.pop("pathParameters", None)
    event["headers"]["authorization"] = f"Bearer {token}"
    return event


@pytest.mark.parametrize("kind", ["revoked", "forged", "malformed"])
def test_a_refused_token_does_not_build_the_named_users_unread_counts(accounts, redis, kind):
    """The unread counts' first round trip goes with the gate; what it finds missing (the
    unread sets, the home timeline, the DM hash: rebuilds, which write) is built only for a
    caller the gate admitted, and only the admitted caller gets the counts."""
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    alice_id = alice.user["id"]
    handler = _load_function("notifications").handler
    secret = alice.token.rsplit("_", 1)[1]
    token = {
        "revoked": alice.token,
        "forged": f"wbl_{alice_id}_{'B' * 43}",
        "malformed": f"wbl_{alice_id}_{secret[:20]}",
    }[kind]
    if kind == "revoked":
        accounts.revoke(accounts.require_token(alice.token), alice.session.id)
        redis.delete(keys.user_budget(alice_id))
    built = (
        keys.notif_positions(alice_id),
        keys.home_timeline(alice_id),
        keys.dm_unread(alice_id),
        keys.user_budget(alice_id),
    )
    present = lambda: sum(redis.exists(key) for key in built)  # noqa: E731 (one slot each)
    assert present() == 0

    answer = handler(_unread_counts_event(token), Context())

    assert answer["statusCode"] == 401
    assert "total" not in answer["body"]
    assert present() == 0
    if kind == "revoked":
        return
    live = handler(_unread_counts_event(alice.token), Context())
    assert live["statusCode"] == 200 and json.loads(live["body"])["total"] == 0
    assert present() == len(built)  # the check can see what a read builds


def test_a_token_of_the_old_form_is_still_admitted(accounts):
    """Sessions issued before tokens named their user keep working until they expire."""
    alice = accounts.signup("alice", "alice@example.com", "correct horse", None, "phone")
    legacy = "wbl_" + "C" * 43
    SessionRepository(services.container().database).insert(
        services.ids().next_id(),
        alice.user["id"],
        security.token_hash(legacy),
        "old phone",
        datetime.now(UTC) + timedelta(days=1),
    )
    handler = _load_function("accounts").handler
    for _ in range(2):  # a miss, then cached
        answer = _get_user(handler, legacy, alice.user["id"])
        assert answer["statusCode"] == 200
        assert answer["headers"]["X-RateLimit-Remaining"]
