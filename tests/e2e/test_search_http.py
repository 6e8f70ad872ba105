"""Search and hashtags over real HTTP against the local runtime (API.md "Search and hashtags"):
people search with degrees, a tweet's hashtags, hashtag timelines and trends.

Hashtag timelines and trends follow the tweets stream through the local poller (API.md: within
5 seconds; a deleted tweet stops counting within 30), so those checks wait for it. Every test
uses tags and names of its own: trends are one list for everyone on the shared stack."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.e2e.conftest import unique_name
from tests.e2e.test_graph_http import _error, _eventually, _ok

pytestmark = pytest.mark.e2e


def _tag(prefix: str = "t") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def _signup(stack, username: str, display_name: str) -> tuple[str, httpx.Client]:
    with stack.client() as anonymous:
        body = _ok(
            anonymous.post(
                "/v1/auth/signup",
                json={
                    "username": username,
                    "email": f"{username}@example.com",
                    "password": "password1",
                    "display_name": display_name,
                },
            ),
            201,
        )
    return body["user"]["id"], stack.client(body["token"])


def _ids(page: dict) -> list[str]:
    return [item["id"] for item in page["items"]]


def _tag_page(client: httpx.Client, tag: str, **params: object) -> dict:
    return _ok(client.get(f"/v1/hashtags/{tag}/tweets", params=params))


def _trend(client: httpx.Client, tag: str) -> dict | None:
    found = [t for t in _ok(client.get("/v1/trends"))["items"] if t["tag"] == tag]
    return found[0] if found else None


@pytest.fixture
def people(stack):
    made: list[httpx.Client] = []

    def make(prefix: str, display_name: str = "") -> tuple[str, httpx.Client, str]:
        name = unique_name(prefix)
        uid, client = _signup(stack, name, display_name or name)
        made.append(client)
        return uid, client, name

    yield make
    for client in made:
        client.close()


# ---- hashtags ---------------------------------------------------------------------------------
def test_a_tweet_carries_its_hashtags_by_the_one_rule(people):
    _, client, _ = people("h")
    text = "Hi #Python, #café and #CAFÉ again; not #123, a#b, nor #" + "x" * 51 + " #日本 #x_1"
    tweet = _ok(client.post("/v1/tweets", json={"text": text}), 201)
    assert tweet["hashtags"] == ["python", "café", "日本", "x_1"]
    assert _ok(client.get(f"/v1/tweets/{tweet['id']}"))["hashtags"] == tweet["hashtags"]
    retweet = _ok(client.post(f"/v1/tweets/{tweet['id']}/retweet"), 201)
    assert retweet["hashtags"] == [] and retweet["retweet_of"]["hashtags"] == tweet["hashtags"]


def test_a_hashtag_timeline_lists_its_tweets_newest_first_and_drops_deleted_ones(people):
    tag = _tag()
    _, alice, _ = people("ha")
    _, bob, _ = people("hb")
    first = _ok(alice.post("/v1/tweets", json={"text": f"one #{tag}"}), 201)
    second = _ok(bob.post("/v1/tweets", json={"text": f"two #{tag.upper()} and #{tag}"}), 201)
    reply = _ok(bob.post("/v1/tweets", json={"text": f"re #{tag}", "reply_to": first["id"]}), 201)
    _ok(alice.post(f"/v1/tweets/{second['id']}/retweet"), 201)  # a retweet is not listed
    expected = [reply["id"], second["id"], first["id"]]
    assert _eventually(lambda: _ids(_tag_page(alice, tag)), expected) == expected
    # The path's tag is matched ignoring case; pages follow the cursor without repeats.
    page = _tag_page(bob, tag.upper(), limit=2)
    assert _ids(page) == expected[:2] and page["next_cursor"]
    rest = _tag_page(bob, tag, limit=2, cursor=page["next_cursor"])
    assert _ids(rest) == expected[2:]
    # A deleted tweet leaves at once (hydration), and its entry follows through the stream.
    assert alice.delete(f"/v1/tweets/{first['id']}").status_code == 204
    assert _ids(_tag_page(alice, tag)) == expected[:2]


def test_a_hashtag_timeline_leaves_out_blocked_and_muted_authors(people):
    tag = _tag()
    viewer_id, viewer, _ = people("hv")
    blocked_id, blocked, _ = people("hx")
    muted_id, muted, _ = people("hm")
    _, blocker, _ = people("hy")
    _, other, _ = people("ho")
    posts = {
        name: _ok(client.post("/v1/tweets", json={"text": f"#{tag} by {name}"}), 201)["id"]
        for name, client in (("b", blocked), ("m", muted), ("y", blocker), ("o", other))
    }
    assert _eventually(lambda: len(_ids(_tag_page(viewer, tag))), 4) == 4
    _ok(viewer.put(f"/v1/users/me/blocks/{blocked_id}"))
    _ok(viewer.put(f"/v1/users/me/mutes/{muted_id}"))
    _ok(blocker.put(f"/v1/users/me/blocks/{viewer_id}"))
    assert _eventually(lambda: _ids(_tag_page(viewer, tag)), [posts["o"]]) == [posts["o"]]
    assert len(_ids(_tag_page(other, tag))) == 4  # nobody else's page changes


def test_a_bad_tag_is_a_400_and_an_unused_one_an_empty_page(people):
    _, client, _ = people("hz")
    for bad in ("123", "a-b", "x" * 51, "tag.with.dots", "%23tag", "%F0%9F%8E%89"):
        _error(client.get(f"/v1/hashtags/{bad}/tweets"), 400, "validation_error")
    assert _tag_page(client, _tag()) == {"items": [], "next_cursor": None}
    _error(client.get(f"/v1/hashtags/{_tag()}/tweets", params={"cursor": "nope"}), 400,
           "validation_error")  # fmt: skip


# ---- trends ------------------------------------------------------------------------------------
def test_trends_rank_by_distinct_authors_and_one_author_never_trends(people):
    wide, solo = _tag("w"), _tag("s")
    # five authors: trends are everyone's on the shared stack, this tag must rank in the ten
    clients = [people(f"tr{n}")[1] for n in range(5)]
    for client in clients:
        _ok(client.post("/v1/tweets", json={"text": f"#{wide}"}), 201)
    for _ in range(5):  # one author repeating a tag: never a trend
        _ok(clients[0].post("/v1/tweets", json={"text": f"#{solo} again"}), 201)
    gone = _ok(clients[1].post("/v1/tweets", json={"text": f"#{wide} #{wide} once"}), 201)
    want = {"tag": wide, "tweet_count": 6, "author_count": 5}
    assert _eventually(lambda: _trend(clients[0], wide), want) == want
    assert _trend(clients[0], solo) is None
    items = _ok(clients[0].get("/v1/trends"))["items"]
    assert len(items) <= 10
    assert items == sorted(items, key=lambda t: (-t["author_count"], -t["tweet_count"]))
    # A deleted tweet stops counting (API.md: within 30 seconds).
    assert clients[1].delete(f"/v1/tweets/{gone['id']}").status_code == 204
    want = {"tag": wide, "tweet_count": 5, "author_count": 5}
    assert _eventually(lambda: _trend(clients[0], wide), want, timeout=30) == want


# ---- people search ---------------------------------------------------------------------------
def _search(client: httpx.Client, q: str, **params: object) -> dict:
    return _ok(client.get("/v1/search/users", params={"q": q, **params}))


def _follow_both(a: tuple[str, httpx.Client], b: tuple[str, httpx.Client]) -> None:
    _ok(a[1].put(f"/v1/users/me/following/{b[0]}"))
    _ok(b[1].put(f"/v1/users/me/following/{a[0]}"))


def test_people_search_ranks_exact_username_then_degree_then_followers(stack, people):
    word = f"zq{uuid.uuid4().hex[:6]}"  # a name nobody else on the stack has
    viewer = people("sv")
    exact_id, exact = _signup(stack, word, "Nobody")  # the username is the query itself
    friend = people("sf", f"{word.capitalize()} Friend")
    second = people("ss", f"Señor {word}ñez")
    third = people("st", f"{word.upper()}-Third")
    famous = people("sp", f"{word} Famous")
    plain = people("sn", f"The {word}")
    fans = [people("fan") for _ in range(2)]
    # viewer - friend - second - third: degrees 1, 2 and 3
    _follow_both(viewer[:2], friend[:2])
    _follow_both(friend[:2], second[:2])
    _follow_both(second[:2], third[:2])
    for fan in fans:  # famous has the most followers, plain one
        _ok(fan[1].put(f"/v1/users/me/following/{famous[0]}"))
    _ok(fans[0][1].put(f"/v1/users/me/following/{plain[0]}"))

    want = [exact_id, friend[0], second[0], third[0], famous[0], plain[0]]

    def ranked() -> list[str]:
        return _ids(_search(viewer[1], f"@{word.upper()} "))

    assert _eventually(ranked, want, timeout=15) == want
    items = _search(viewer[1], word)["items"]
    assert [item["degree"] for item in items] == [None, 1, 2, 3, None, None]
    assert [item["relationship"] for item in items][:3] == ["none", "friends", "none"]
    assert {"followers_count", "username", "display_name", "bio"} <= set(items[0])
    exact.close()


def test_people_search_ignores_case_and_accents_and_sees_edits_at_once(stack, people):
    word = f"jq{uuid.uuid4().hex[:5]}"
    viewer = people("av")
    jose_id, jose, _ = people("aj", f"José Núñez{word}")
    assert _ids(_search(viewer[1], f"NUNEZ{word}")) == [jose_id]
    assert _ids(_search(viewer[1], f"núñez{word[:3]}")) == [jose_id]  # accents in q too
    assert _ids(_search(viewer[1], f"jose nunez{word}")) == [jose_id]  # several words
    _ok(jose.patch("/v1/users/me", json={"display_name": f"Renamed {word}x"}))
    assert _ids(_search(viewer[1], f"nunez{word}")) == []
    assert _ids(_search(viewer[1], f"{word}x")) == [jose_id]
    # The viewer is never listed, nor anyone blocking or blocked by the viewer.
    assert _ids(_search(jose, f"{word}x")) == []
    _ok(jose.put(f"/v1/users/me/blocks/{viewer[0]}"))
    assert _ids(_search(viewer[1], f"{word}x")) == []


def test_people_search_pages_without_repeats_and_refuses_bad_queries(people):
    word = f"pq{uuid.uuid4().hex[:6]}"
    viewer = people("pv")
    found = {people("pp", f"{word} {n}")[0] for n in range(5)}
    first = _search(viewer[1], word, limit=2)
    assert len(first["items"]) == 2 and first["next_cursor"]
    seen = _ids(first)
    cursor = first["next_cursor"]
    while cursor:
        page = _search(viewer[1], word, limit=2, cursor=cursor)
        seen += _ids(page)
        cursor = page["next_cursor"]
    assert sorted(seen) == sorted(found) and len(seen) == len(set(seen))
    for bad in ("", "   ", "@", "x" * 51):
        _error(viewer[1].get("/v1/search/users", params={"q": bad}), 400, "validation_error")
    _error(viewer[1].get("/v1/search/users"), 400, "validation_error")
    for cursor in ("nope", _search(viewer[1], "pp", limit=1)["next_cursor"]):  # another q's
        _error(viewer[1].get("/v1/search/users", params={"q": word, "cursor": cursor}), 400,
               "validation_error")  # fmt: skip
    assert _search(viewer[1], "!!!") == {"items": [], "next_cursor": None}
