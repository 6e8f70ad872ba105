"""Muted words over real HTTP against the local runtime (API.md "Reports and moderation"): the
two routes, their 400s (nothing written), and a muted tweet gone from home on the next
request."""

from __future__ import annotations

import pytest

from tests.e2e.test_graph_http import _error, _eventually, _ok

pytestmark = pytest.mark.e2e


def test_the_list_is_replaced_whole_and_read_back(pair):
    _, mine, _, _ = pair
    assert _ok(mine.get("/v1/users/me/muted-words")) == {"words": []}
    answer = _ok(mine.put("/v1/users/me/muted-words", json={"words": [" spoiler ", "#Finale"]}))
    assert answer == {"words": ["spoiler", "#Finale"]}
    assert _ok(mine.get("/v1/users/me/muted-words")) == answer
    assert _ok(mine.put("/v1/users/me/muted-words", json={"words": []})) == {"words": []}
    assert _ok(mine.get("/v1/users/me/muted-words")) == {"words": []}


@pytest.mark.parametrize(
    "body",
    [
        {"words": [f"w{i}" for i in range(101)]},
        {"words": ["fine", "  "]},
        {"words": ["x" * 51]},
        {"words": "spoiler"},
        {"words": [1]},
        {},
    ],
    ids=["101 words", "blank", "51 characters", "not a list", "not text", "no words"],
)
def test_a_bad_list_is_a_400_and_writes_nothing(pair, body):
    _, mine, _, _ = pair
    _ok(mine.put("/v1/users/me/muted-words", json={"words": ["kept"]}))
    _error(mine.put("/v1/users/me/muted-words", json=body), 400, "validation_error")
    assert _ok(mine.get("/v1/users/me/muted-words")) == {"words": ["kept"]}


def test_a_muted_tweet_leaves_home_on_the_next_request(pair):
    _, mine, them, theirs = pair
    _ok(mine.put(f"/v1/users/me/following/{them['id']}"))
    muted = _ok(theirs.post("/v1/tweets", json={"text": "Big SPOILER!"}), 201)
    plain = _ok(theirs.post("/v1/tweets", json={"text": "no spoilers here"}), 201)

    def home() -> list[str]:
        return [t["id"] for t in _ok(mine.get("/v1/timeline/home"))["items"]]

    assert _eventually(home, [plain["id"], muted["id"]]) == [plain["id"], muted["id"]]
    _ok(mine.put("/v1/users/me/muted-words", json={"words": ["spoiler"]}))
    assert home() == [plain["id"]]
    _ok(mine.put("/v1/users/me/muted-words", json={"words": []}))
    assert home() == [plain["id"], muted["id"]]
