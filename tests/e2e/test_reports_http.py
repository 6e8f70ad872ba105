"""Reports and moderators' cases over real HTTP against the local runtime (API.md "Reports and
moderation"): a report and its repeat (201, then 200), the 400s and 404s that write nothing,
20 new reports an hour (429), cases for moderators only (403), the queue's order, a resolve that
removes a tweet, 409 on a closed case, and a snapshot that survives its author's delete."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.test_graph_http import _error, _ok

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def moderator(stack) -> Iterator[httpx.Client]:
    """The local stack's admin (created by the stack, password warble-admin-local)."""
    with stack.client() as anonymous:
        logged_in = anonymous.post(
            "/v1/auth/login", json={"login": "warble_admin", "password": "warble-admin-local"}
        )
    token = _ok(logged_in)["token"]
    with stack.client(token) as client:
        yield client


def _report(client: httpx.Client, target_type: str, target_id: str, reason: str = "spam", **more):
    return client.post(
        "/v1/reports",
        json={"target_type": target_type, "target_id": target_id, "reason": reason, **more},
    )


def _open_case_of(moderator: httpx.Client, target_id: str) -> dict:
    """The open case of a target (other tests' cases share the queue)."""
    cursor = None
    while True:
        params = {"status": "open", "limit": 100, **({"cursor": cursor} if cursor else {})}
        page = _ok(moderator.get("/v1/admin/cases", params=params))
        for case in page["items"]:
            if case["target_id"] == target_id:
                return case
        cursor = page["next_cursor"]
        assert cursor is not None, f"no open case of {target_id}"


def test_a_report_then_its_repeat_and_my_list(pair):
    _, mine, them, theirs = pair
    first = _ok(_report(mine, "user", them["id"], "impersonation", comment="not the real one"), 201)
    assert set(first) == {
        "id", "target_type", "target_id", "reason", "comment", "status", "created_at",
        "resolved_at",
    }  # fmt: skip
    assert (first["target_type"], first["target_id"], first["status"]) == (
        "user", them["id"], "open",
    )  # fmt: skip
    assert first["comment"] == "not the real one" and first["resolved_at"] is None
    again = _ok(_report(mine, "user", them["id"], "spam"), 200)
    assert again == first
    assert _ok(mine.get("/v1/reports")) == {"items": [first], "next_cursor": None}
    # the reported person is never told, nor sees the report
    assert _ok(theirs.get("/v1/notifications"))["items"] == []
    assert _ok(theirs.get("/v1/reports"))["items"] == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"target_type": "post", "target_id": "1", "reason": "spam"}, 400, "validation_error"),
        ({"target_type": "user", "target_id": "1", "reason": "rude"}, 400, "validation_error"),
        ({"target_type": "user", "target_id": "x", "reason": "spam"}, 400, "validation_error"),
        ({"target_type": "user", "reason": "spam"}, 400, "validation_error"),
        ({"target_type": "tweet", "target_id": "7", "reason": "spam"}, 404, "not_found"),
        ({"target_type": "user", "target_id": "7", "reason": "spam"}, 404, "not_found"),
        ({"target_type": "message", "target_id": "7", "reason": "spam"}, 404, "not_found"),
    ],
    ids=["bad type", "bad reason", "bad id", "no id", "no tweet", "no user", "no message"],
)
def test_bad_or_unknown_targets_write_nothing(pair, body, status, code):
    _, mine, _, _ = pair
    _error(mine.post("/v1/reports", json=body), status, code)
    assert _ok(mine.get("/v1/reports"))["items"] == []


def test_a_long_comment_and_self_reports_are_400(pair):
    me, mine, them, _ = pair
    _error(_report(mine, "user", them["id"], comment="x" * 1001), 400, "validation_error")
    _error(_report(mine, "user", me["id"]), 400, "validation_error")
    tweet = _ok(mine.post("/v1/tweets", json={"text": "my own words"}), 201)
    _error(_report(mine, "tweet", tweet["id"]), 400, "validation_error")
    assert _ok(mine.get("/v1/reports"))["items"] == []


def test_twenty_new_reports_an_hour(stack, new_user):
    _, token = new_user("rep")
    targets = [new_user("tgt")[0]["user"]["id"] for _ in range(21)]
    with stack.client(token) as mine:
        for target in targets[:20]:
            _ok(_report(mine, "user", target), 201)
        refused = _report(mine, "user", targets[20])
        _error(refused, 429, "rate_limited")
        assert int(refused.headers["Retry-After"]) > 0
        _ok(_report(mine, "user", targets[0]), 200)  # a repeat is still answered
        assert len(_ok(mine.get("/v1/reports", params={"limit": 100}))["items"]) == 20


def test_cases_are_for_moderators_only(pair):
    _, mine, them, _ = pair
    _ok(_report(mine, "user", them["id"]), 201)
    _error(mine.get("/v1/admin/cases"), 403, "forbidden")
    _error(mine.get("/v1/admin/cases", params={"status": "closed"}), 403, "forbidden")
    _error(mine.post("/v1/admin/cases/1/resolve", json={"action": "dismiss"}), 403, "forbidden")


def test_me_tells_a_moderator_so_and_nobody_else(stack, pair, moderator):
    # given a person and the stack's admin (the moderators are the admins)
    _, mine, _, _ = pair
    # then their own User says which one is a moderator: GET /v1/users/me, a profile edit's
    # answer and the login's user (a client shows the moderators' screens by it)
    assert _ok(mine.get("/v1/users/me"))["admin"] is False
    assert _ok(moderator.get("/v1/users/me"))["admin"] is True
    assert _ok(moderator.patch("/v1/users/me", json={"bio": "Moderator"}))["admin"] is True
    with stack.client() as anonymous:
        logged_in = anonymous.post(
            "/v1/auth/login", json={"login": "WARBLE_ADMIN", "password": "warble-admin-local"}
        )
    assert _ok(logged_in)["user"]["admin"] is True
    # and nobody else's User carries it
    someone = _ok(mine.get("/v1/users/by-username/warble_admin"))
    assert "admin" not in someone


def test_the_queue_puts_the_most_reported_first(stack, new_user, moderator):
    reporters = [stack.client(new_user("r")[1]) for _ in range(3)]
    loud, quiet = new_user("loud")[0]["user"]["id"], new_user("quiet")[0]["user"]["id"]
    _ok(_report(reporters[0], "user", quiet), 201)
    for client in reporters:
        _ok(_report(client, "user", loud, "hate"), 201)
    for client in reporters:
        client.close()
    page = _ok(moderator.get("/v1/admin/cases", params={"status": "open", "limit": 100}))
    order = [c["target_id"] for c in page["items"] if c["target_id"] in (loud, quiet)]
    assert order == [loud, quiet]
    case = _open_case_of(moderator, loud)
    assert (case["reporter_count"], case["reasons"], case["status"]) == (3, {"hate": 3}, "open")
    assert case["subject"]["id"] == loud and case["action"] is None


def test_remove_deletes_the_tweet_then_the_case_is_closed(pair, moderator):
    _, mine, them, theirs = pair
    tweet = _ok(theirs.post("/v1/tweets", json={"text": "buy cheap followers"}), 201)
    report = _ok(_report(mine, "tweet", tweet["id"], comment="bot"), 201)
    case = _open_case_of(moderator, tweet["id"])
    assert case["snapshot"] == {"text": "buy cheap followers", "media": []}
    assert case["subject"] == {
        "id": them["id"], "username": them["username"], "display_name": them["display_name"],
    }  # fmt: skip
    path = f"/v1/admin/cases/{case['id']}/resolve"
    closed = _ok(moderator.post(path, json={"action": "remove", "note": "spam"}))
    assert (closed["status"], closed["action"], closed["note"]) == ("closed", "remove", "spam")
    assert closed["closed_at"] is not None
    _error(mine.get(f"/v1/tweets/{tweet['id']}"), 404, "not_found")
    _error(theirs.get(f"/v1/tweets/{tweet['id']}"), 404, "not_found")
    [mine_now] = _ok(mine.get("/v1/reports"))["items"]
    assert (mine_now["id"], mine_now["status"]) == (report["id"], "actioned")
    assert mine_now["resolved_at"] is not None
    _error(moderator.post(path, json={"action": "dismiss"}), 409, "conflict")
    closed_page = _ok(moderator.get("/v1/admin/cases", params={"status": "closed"}))
    assert closed_page["items"][0]["id"] == case["id"]  # newest closing first
    # a new report of a target whose case closed opens a new case (here: the author)
    _ok(_report(mine, "user", them["id"]), 201)


def test_suspend_suspends_the_subject_and_a_lift_brings_them_back(pair, moderator):
    """A case resolved with ``suspend`` (ReportsFunction, as warble_accounts): the subject's
    session ends, their login is 403 account_suspended, others see a 404; the lift undoes it."""
    _, mine, them, theirs = pair
    tweet = _ok(theirs.post("/v1/tweets", json={"text": "a threat"}), 201)
    _ok(_report(mine, "tweet", tweet["id"], "violence"), 201)
    case = _open_case_of(moderator, tweet["id"])
    path = f"/v1/admin/cases/{case['id']}/resolve"
    closed = _ok(moderator.post(path, json={"action": "suspend", "note": "threats"}))
    assert (closed["status"], closed["action"]) == ("closed", "suspend")
    _error(theirs.get("/v1/users/me"), 401, "unauthorized")
    login = {"login": them["username"], "password": "password1"}
    _error(mine.post("/v1/auth/login", json=login), 403, "account_suspended")
    _error(mine.get(f"/v1/users/{them['id']}"), 404, "not_found")
    lifted = moderator.delete(f"/v1/admin/users/{them['id']}/suspension")
    assert _ok(lifted) == {"suspended": False}
    assert _ok(mine.get(f"/v1/users/{them['id']}"))["id"] == them["id"]
    assert _ok(mine.post("/v1/auth/login", json=login))["token"]


def test_remove_of_a_user_is_400_and_an_unknown_case_404(pair, moderator):
    _, mine, them, _ = pair
    _ok(_report(mine, "user", them["id"]), 201)
    case = _open_case_of(moderator, them["id"])
    path = f"/v1/admin/cases/{case['id']}/resolve"
    _error(moderator.post(path, json={"action": "remove"}), 400, "validation_error")
    _error(moderator.post(path, json={"action": "ban"}), 400, "validation_error")
    assert _open_case_of(moderator, them["id"])["status"] == "open"
    _error(
        moderator.post("/v1/admin/cases/12345/resolve", json={"action": "dismiss"}),
        404,
        "not_found",
    )
    dismissed = _ok(moderator.post(path, json={"action": "dismiss"}))
    assert dismissed["action"] == "dismiss"
    assert _ok(mine.get("/v1/reports"))["items"][0]["status"] == "dismissed"


def test_the_snapshot_survives_its_authors_delete(pair, moderator):
    _, mine, _, theirs = pair
    tweet = _ok(theirs.post("/v1/tweets", json={"text": "evidence #gone"}), 201)
    _ok(_report(mine, "tweet", tweet["id"], "abuse"), 201)
    assert theirs.delete(f"/v1/tweets/{tweet['id']}").status_code == 204
    case = _open_case_of(moderator, tweet["id"])
    assert case["snapshot"]["text"] == "evidence #gone"
    path = f"/v1/admin/cases/{case['id']}/resolve"
    assert _ok(moderator.post(path, json={"action": "remove"}))["status"] == "closed"


def test_a_message_is_reported_by_its_recipient_and_removed_for_both(stack, new_user, moderator):
    (a, a_token), (b, b_token), (_, eve_token) = new_user("a"), new_user("b"), new_user("eve")
    with (
        stack.client(a_token) as alice,
        stack.client(b_token) as bob,
        stack.client(eve_token) as eve,
    ):
        assert alice.put(f"/v1/users/me/following/{b['user']['id']}").status_code in (200, 204)
        assert bob.put(f"/v1/users/me/following/{a['user']['id']}").status_code in (200, 204)
        conversation = alice.post("/v1/conversations", json={"participant_id": b["user"]["id"]})
        conversation_id = _ok(conversation, conversation.status_code)["id"]
        messages = f"/v1/conversations/{conversation_id}/messages"
        nasty = _ok(bob.post(messages, json={"text": "nasty words"}), 201)
        _error(_report(eve, "message", nasty["id"]), 404, "not_found")
        _error(_report(bob, "message", nasty["id"]), 400, "validation_error")
        _ok(_report(alice, "message", nasty["id"], "abuse"), 201)
        case = _open_case_of(moderator, nasty["id"])
        assert case["snapshot"] == {"text": "nasty words"}
        assert case["subject"]["id"] == b["user"]["id"]
        path = f"/v1/admin/cases/{case['id']}/resolve"
        _ok(moderator.post(path, json={"action": "remove"}))
        for client in (alice, bob):
            assert _ok(client.get(messages))["items"] == []


def test_the_purge_runs_on_demand(stack):
    """Nothing closed 90 days ago on a new stack: nothing purged."""
    assert stack.schedule("CasesPurgeFunction") == {"purged": 0}
