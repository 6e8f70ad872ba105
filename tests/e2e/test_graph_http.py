"""The follow graph over real HTTP against the local runtime: every endpoint, and bad input.

followers_count comes from the graph table's stream through the local poller and the counter
consumer, so the tests that read it wait for it (API.md: within 5 seconds locally).
"""

from __future__ import annotations

import time

import httpx
import pytest

pytestmark = pytest.mark.e2e


def _ok(answer: httpx.Response, status: int = 200) -> dict:
    assert answer.status_code == status, answer.text
    return answer.json()


def _error(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code


def _eventually(read, expected, timeout: float = 8.0):
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value == expected or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


@pytest.fixture
def trio(stack, new_user):
    users = [new_user("g") for _ in range(3)]
    clients = [stack.client(token) for _, token in users]
    yield [body["user"]["id"] for body, _ in users], clients
    for client in clients:
        client.close()


def test_follow_unfollow_statuses_lists_and_counts(trio):
    (a, b, c), (as_a, as_b, as_c) = trio

    assert _ok(as_a.put(f"/v1/users/me/following/{b}")) == {"relationship": "following"}
    assert _ok(as_a.put(f"/v1/users/me/following/{b}")) == {"relationship": "following"}
    assert _ok(as_b.put(f"/v1/users/me/following/{a}")) == {"relationship": "friends"}
    assert _ok(as_c.put(f"/v1/users/me/following/{b}")) == {"relationship": "following"}

    statuses = _ok(as_b.get("/v1/users/me/relationships", params={"ids": f"{c},{a},999,{b}"}))
    no_blocks = {"blocking": False, "blocked_by": False, "muting": False}
    assert statuses["items"] == [
        {"user_id": c, "status": "followed_by", **no_blocks},
        {"user_id": a, "status": "friends", **no_blocks},
        {"user_id": "999", "status": "none", **no_blocks},
        {"user_id": b, "status": "none", **no_blocks},
    ]

    # b's followers, newest first, each with the viewer's (c's) relationship
    page = _ok(as_c.get(f"/v1/users/{b}/followers", params={"limit": 1}))
    assert [u["id"] for u in page["items"]] == [c] and page["next_cursor"]
    rest = _ok(as_c.get(f"/v1/users/{b}/followers", params={"cursor": page["next_cursor"]}))
    assert [u["id"] for u in rest["items"]] == [a] and rest["next_cursor"] is None
    assert rest["items"][0]["relationship"] == "none"
    assert "relationship" not in page["items"][0]  # c itself
    following = _ok(as_c.get("/v1/users/me/following"))
    assert [(u["id"], u["relationship"]) for u in following["items"]] == [(b, "following")]
    assert following["items"][0]["following_count"] == 1

    friends = _ok(as_a.get(f"/v1/users/{a}/friends"))
    assert [u["id"] for u in friends["items"]] == [b]

    # followers_count flows through the stream consumer
    def followers_of_b() -> int:
        return _ok(as_a.get(f"/v1/users/{b}"))["followers_count"]

    assert _eventually(followers_of_b, 2) == 2
    user_b = _ok(as_a.get(f"/v1/users/{b}"))
    assert user_b["relationship"] == "friends" and user_b["following_count"] == 1

    assert _ok(as_a.delete(f"/v1/users/me/following/{b}")) == {"relationship": "followed_by"}
    assert _ok(as_a.delete(f"/v1/users/me/following/{b}")) == {"relationship": "followed_by"}
    assert _eventually(followers_of_b, 1) == 1
    assert _ok(as_a.get("/v1/users/me"))["following_count"] == 0


def test_mutual_friends_and_degrees(stack, new_user):
    users = [new_user("d") for _ in range(5)]
    ids = [body["user"]["id"] for body, _ in users]
    clients = [stack.client(token) for _, token in users]
    try:
        a, b, c, d, lone = ids
        # a <-> b <-> c <-> d
        for (x, cx), (y, cy) in (
            ((a, clients[0]), (b, clients[1])),
            ((b, clients[1]), (c, clients[2])),
            ((c, clients[2]), (d, clients[3])),
        ):
            _ok(cx.put(f"/v1/users/me/following/{y}"))
            _ok(cy.put(f"/v1/users/me/following/{x}"))
        as_a = clients[0]
        mutual = _ok(as_a.get(f"/v1/users/me/mutual-friends/{c}"))
        assert mutual["count"] == 1 and [u["id"] for u in mutual["items"]] == [b]
        assert mutual["items"][0]["relationship"] == "friends"
        assert _ok(as_a.get(f"/v1/users/me/degree/{b}")) == {"degree": 1, "label": "1st"}
        assert _ok(as_a.get(f"/v1/users/me/degree/{c}")) == {"degree": 2, "label": "2nd"}
        assert _ok(as_a.get(f"/v1/users/me/degree/{lone}")) == {"degree": None, "label": "3rd+"}
        # Degree 3 from a's second-degree set, computed when first asked: no job to wait for.
        assert _ok(as_a.get(f"/v1/users/me/degree/{d}")) == {"degree": 3, "label": "3rd"}
    finally:
        for client in clients:
            client.close()


def test_bad_input_is_a_4xx_and_writes_nothing(trio):
    (a, b, _), (as_a, as_b, _) = trio
    _error(as_a.put(f"/v1/users/me/following/{a}"), 400, "cannot_follow_self")
    _error(as_a.put("/v1/users/me/following/123456789"), 404, "not_found")
    _error(as_a.put("/v1/users/me/following/abc"), 400, "validation_error")  # the id pattern
    _error(as_a.put("/v1/users/me/following/" + "9" * 40), 400, "validation_error")
    _error(as_a.delete("/v1/users/me/following/-1"), 400, "validation_error")
    _error(as_a.get(f"/v1/users/{b}/followers", params={"limit": 0}), 400, "validation_error")
    _error(as_a.get(f"/v1/users/{b}/followers", params={"limit": 101}), 400, "validation_error")
    _error(as_a.get(f"/v1/users/{b}/following", params={"limit": "x"}), 400, "validation_error")
    _error(as_a.get(f"/v1/users/{b}/friends", params={"cursor": "%%%"}), 400, "validation_error")
    _error(as_a.get(f"/v1/users/{b}/followers", params={"cursor": "b:12"}), 400, "validation_error")
    _error(as_a.get("/v1/users/nobody/followers"), 400, "validation_error")
    _error(as_a.get("/v1/users/123456789/following"), 404, "not_found")
    many = ",".join(str(10_000 + i) for i in range(101))
    _error(as_a.get("/v1/users/me/relationships", params={"ids": many}), 400, "validation_error")
    _error(as_a.get("/v1/users/me/relationships", params={"ids": "1,x"}), 400, "validation_error")
    _error(as_a.get("/v1/users/me/relationships"), 400, "validation_error")
    _error(as_a.get("/v1/users/me/degree/abc"), 400, "validation_error")
    _error(as_a.get(f"/v1/users/me/degree/{a}"), 400, "validation_error")
    _error(as_a.get("/v1/users/me/mutual-friends/123456789"), 404, "not_found")
    with httpx.Client(base_url=str(as_a.base_url)) as anonymous:
        assert anonymous.put(f"/v1/users/me/following/{b}").status_code == 401
    assert _ok(as_a.get("/v1/users/me/following"))["items"] == []
    assert _ok(as_b.get("/v1/users/me/followers"))["items"] == []


def test_a_spread_accounts_followers_page_and_count_across_its_shards(stack, new_user):
    import boto3

    # given a star whose followers go to 4 partitions (its META's follower_shards, as the
    # fan-out sets it past 100,000 followers), then followed by six users
    star = new_user("s")[0]["user"]["id"]
    aws = {"endpoint_url": stack.moto, "region_name": "us-east-1",
           "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # fmt: skip
    graph, table = boto3.client("dynamodb", **aws), f"{stack.stack_name}-graph"
    graph.update_item(
        TableName=table,
        Key={"pk": {"S": f"U#{star}"}, "sk": {"S": "META"}},
        UpdateExpression="SET follower_shards = :n",
        ExpressionAttributeValues={":n": {"N": "4"}},
    )
    fans = [new_user("f") for _ in range(6)]
    clients = [stack.client(token) for _, token in fans]
    ids = [body["user"]["id"] for body, _ in fans]
    try:
        for client in clients:
            _ok(client.put(f"/v1/users/me/following/{star}"))
        as_fan = clients[0]
        in_shards = sum(
            graph.query(TableName=table, KeyConditionExpression="pk = :p", Select="COUNT",
                        ExpressionAttributeValues={":p": {"S": f"U#{star}#{k}"}})["Count"]
            for k in (1, 2, 3)
        )  # fmt: skip
        assert in_shards > 0  # (all six in shard 0: one chance in 4,096)

        # then the list pages newest first across the shards with its cursor
        listed, cursor = [], None
        while True:
            params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
            page = _ok(as_fan.get(f"/v1/users/{star}/followers", params=params))
            listed += [u["id"] for u in page["items"]]
            if not (cursor := page["next_cursor"]):
                break
        assert listed == ids[::-1]
        # and the count comes through the stream from every shard's edges, an unfollow too
        count = lambda: _ok(as_fan.get(f"/v1/users/{star}"))["followers_count"]  # noqa: E731
        assert _eventually(count, 6) == 6
        assert _ok(clients[-1].delete(f"/v1/users/me/following/{star}"))["relationship"] == "none"
        assert _eventually(count, 5) == 5
        page = _ok(as_fan.get(f"/v1/users/{star}/followers", params={"limit": 10}))
        assert [u["id"] for u in page["items"]] == ids[-2::-1]
    finally:
        for client in clients:
            client.close()
