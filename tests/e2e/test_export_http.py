"""The export over real HTTP against the local runtime (API.md "Accounts", Export): one JSON
document in the contract's shapes (the e2e clients check every answer against the OpenAPI
document), private (no-store), with what the account made and nothing secret."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.e2e

WAIT = 20


def test_the_export_is_one_private_document_of_everything_mine(stack, new_user):
    me, token = new_user("ex")
    friend, friend_token = new_user("ef")
    with stack.client(token) as mine, stack.client(friend_token) as theirs:
        posted = [mine.post("/v1/tweets", json={"text": f"export {i}"}).json() for i in range(3)]
        theirs_tweet = theirs.post("/v1/tweets", json={"text": "theirs"}).json()
        assert mine.put(f"/v1/tweets/{theirs_tweet['id']}/like").status_code in (200, 201)
        assert mine.put(f"/v1/users/me/following/{friend['user']['id']}").status_code == 200
        assert theirs.put(f"/v1/users/me/following/{me['user']['id']}").status_code == 200
        assert (
            mine.put("/v1/users/me/location", json={"lat": 52.52, "lon": 13.405}).status_code == 204
        )
        # the follow's notification is derived by a stream: wait until it is there
        deadline = time.monotonic() + WAIT
        while not mine.get("/v1/notifications").json()["items"]:
            assert time.monotonic() < deadline, "the follow's notification never came"
            time.sleep(0.2)
        # and the follow's counters, so that the two exports below read the same profile
        while mine.get("/v1/users/me").json().get("followers_count") != 1:
            assert time.monotonic() < deadline, "the follow's counter never settled"
            time.sleep(0.2)

        answer = mine.get("/v1/users/me/export")  # httpx accepts gzip, and undoes it
        plain = mine.get("/v1/users/me/export", headers={"Accept-Encoding": "identity"})

    assert answer.status_code == 200, answer.text
    # gzipped for a client that accepts it, as it is for one that does not: the same document
    assert answer.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert answer.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert plain.json() == answer.json()
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"
    document = answer.json()
    assert document["user"]["email"] == me["user"]["email"]
    assert [t["id"] for t in document["tweets"]] == [t["id"] for t in reversed(posted)]
    assert [t["id"] for t in document["likes"]] == [theirs_tweet["id"]]
    assert [u["id"] for u in document["following"]] == [friend["user"]["id"]]
    assert [u["id"] for u in document["followers"]] == [friend["user"]["id"]]
    assert document["notifications"] and document["location"] == {"lat": 52.52, "lon": 13.405}
    assert [s["current"] for s in document["sessions"]] == [True]
    text = json.dumps(document)
    for secret in (token, friend_token, friend["user"]["email"], "$2b$"):
        assert secret not in text
