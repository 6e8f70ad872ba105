"""The web client's search bar in a real browser (headless Chromium, as tests/e2e/test_web_client.py
drives it): people with their degree badge and relationship, the trends panel, a hashtag's page,
and hashtags linked in tweets. Set-up (friendships, other people's tweets) goes through the HTTP
API; what is tested goes through the page."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.e2e.conftest import unique_name
from tests.e2e.test_web_client import browser, person, shots  # noqa: F401  fixtures

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]


def _befriend(stack, a: str, a_token: str, b: str, b_token: str) -> None:
    with stack.client(a_token) as as_a, stack.client(b_token) as as_b:
        assert as_a.put(f"/v1/users/me/following/{b}").status_code == 200
        assert as_b.put(f"/v1/users/me/following/{a}").status_code == 200


def test_search_people_by_degree_trends_and_a_hashtag_page(stack, new_user, person, shots):  # noqa: F811
    word = f"Wq{uuid.uuid4().hex[:5]}"
    tag = f"picnic{uuid.uuid4().hex[:6]}"
    viewer = person()
    viewer.sign_up(unique_name("seer"))
    me = viewer.page.evaluate("localStorage.getItem('warble.token')")
    with stack.client(me) as client:
        my_id = client.get("/v1/users/me").json()["id"]
    people = {}
    for key, display in (
        ("friend", f"Ana {word}"),
        ("second", f"{word} Núñez"),
        ("far", f"Zoë {word}"),
    ):
        body, token = new_user(key[:4])
        with stack.client(token) as client:
            client.patch("/v1/users/me", json={"display_name": display}).raise_for_status()
        people[key] = (body["user"]["id"], token)
    _befriend(stack, my_id, me, *people["friend"])  # viewer - friend - second
    _befriend(stack, *people["friend"], *people["second"])
    # Two people use the tag: it trends (one person alone never would).
    for key in ("friend", "far"):
        with stack.client(people[key][1]) as client:
            text = f"Park at noon #{tag.capitalize()}, bring fruit"
            assert client.post("/v1/tweets", json={"text": text}).status_code == 201

    # The search bar: typing lists people, the nearest first, each with degree and relationship.
    viewer.go("search")
    page = viewer.page
    page.get_by_label("Search people").fill(word.lower())
    rows = page.get_by_test_id("person")
    rows.nth(2).wait_for()
    assert [rows.nth(i).get_attribute("data-user-id") for i in range(3)] == [
        people["friend"][0], people["second"][0], people["far"][0]
    ]  # fmt: skip
    assert rows.nth(0).get_by_test_id("degree").inner_text() == "1st"
    assert rows.nth(0).get_by_test_id("relationship").inner_text() == "Friends"
    assert rows.nth(1).get_by_test_id("degree").inner_text() == "2nd"
    assert rows.nth(2).get_by_test_id("degree").count() == 0  # further than 3rd: no badge
    viewer.shot(shots, "search")
    assert viewer.accessibility() == [], "search"

    # An empty bar shows the trends, as the API ranks them. (They are everyone's on the shared
    # stack: other tests' tags may outrank this one, so the panel is checked against the API.)
    def trends() -> list[dict]:
        with stack.client(me) as client:
            return client.get("/v1/trends").json()["items"]

    deadline = time.monotonic() + 30  # the stream, through a reader that may be cold
    while not any(t["tag"] == tag for t in trends()) and len(trends()) < 10:
        assert time.monotonic() < deadline, trends()
        time.sleep(0.5)
    page.get_by_label("Search people").fill("")
    page.get_by_role("heading", name="Trends in the last hour").wait_for()
    shown = page.get_by_test_id("trend")
    shown.first.wait_for()
    top = trends()[0]
    assert shown.first.get_by_role("link").inner_text().endswith(f"#{top['tag']}")
    people = "person" if top["author_count"] == 1 else "people"
    assert f"{top['author_count']} {people}" in shown.first.inner_text()
    viewer.shot(shots, "trends")
    assert viewer.accessibility() == [], "trends"
    shown.first.get_by_role("link").click()
    page.get_by_role("heading", name=f"#{top['tag']}").wait_for()

    # A tweet's tag is a link (case kept as written) to the tag's page: both tweets there.
    viewer.go("home")  # the friend's tweet is in the home timeline
    link = page.locator("article.tweet a.hashtag").first
    assert link.inner_text() == f"#{tag.capitalize()}"
    link.click()
    page.get_by_role("heading", name=f"#{tag}").wait_for()
    page.locator("article.tweet").nth(1).wait_for()
    assert page.locator("article.tweet a.hashtag").count() == 2
    viewer.shot(shots, "hashtag")
    assert viewer.accessibility() == [], "hashtag"
