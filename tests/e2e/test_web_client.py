"""The web client in a real browser (headless Chromium driven by Playwright) against the local
runtime: the flows a person goes through, each user in a browser context of their own.

All of them share the e2e stack and one browser (one xdist group). Set-up that is not the point
of a test (older tweets to scroll through, a history to page up) goes through the HTTP API; what
is tested goes through the page. Screenshots of the main screens are taken on every run, into
`docs/screenshots/` with WARBLE_SCREENSHOTS=docs.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import unique_name
from tests.e2e.test_conversations_ws import unregister
from tests.e2e.test_reports_http import _open_case_of
from tests.e2e.test_tweets_http import eventually
from tests.support.browser import PHONE, VIEWPORT, WebUser, chromium, screenshot_dir

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]
SETTLE_MS = 30_000  # what a reconnection and a reload may take on a busy machine

NOTES = [
    "Morning run by the river: 8 km, and the herons were out again.",
    "Reading about fill leases in memcache. Cache invalidation really is the hard part.",
    "Coffee tasting at the corner shop today: the Ethiopian one wins.",
    "Trying to get the sourdough starter to behave. Day 4.",
    "Who else is going to the meetup on Thursday?",
    "New bike lights. Nobody can say they did not see me now.",
    "The library has a seed exchange now. Tomatoes, anyone?",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_dir(tmp_path_factory.mktemp("screens"))


@pytest.fixture
def person(browser, stack, tmp_path) -> Iterator:
    made: list[WebUser] = []

    def make(**context_args) -> WebUser:
        user = WebUser(browser, stack.web, (stack.http, stack.ws), **context_args)
        made.append(user)
        return user

    yield make
    for i, user in enumerate(made):
        user.shot(tmp_path, f"last-{i}")  # what each person saw last, for a failure's report
        user.close()


def token_of(user: WebUser) -> str:
    """The token the page keeps (for set-up through the HTTP API only)."""
    return user.page.evaluate("localStorage.getItem('warble.token')")


def api_user(stack, new_user, prefix: str, display_name: str, bio: str = "") -> tuple[dict, str]:
    body, token = new_user(prefix)
    with stack.client(token) as client:
        client.patch("/v1/users/me", json={"display_name": display_name, "bio": bio})
    return body["user"], token


def test_timeline_follow_post_new_posts_bar_and_live_notification_badges(
    stack, person, shots
) -> None:
    alice, bob = person(), person()
    alice.sign_up(unique_name("alice"))
    bob.sign_up(unique_name("bob"))

    # Alice edits her profile from the page; older tweets of hers come through the API.
    alice.go(f"u/{alice.username}")
    alice.page.get_by_role("button", name="Edit profile").click()
    alice.page.get_by_label("Display name").fill("Alice Liddell")
    alice.page.get_by_label("Bio").fill("Curiouser and curiouser. Tea at four.")
    alice.page.get_by_role("button", name="Save").click()
    alice.page.get_by_role("heading", name="Alice Liddell").wait_for()
    with stack.client(token_of(bob)) as client:
        client.patch("/v1/users/me", json={"display_name": "Bob Fleming"}).raise_for_status()
    bob.page.reload()
    with stack.client(token_of(alice)) as client:
        for i in range(22):
            posted = client.post("/v1/tweets", json={"text": NOTES[i % len(NOTES)]})
            assert posted.status_code == 201, posted.text

    # Bob follows her from her profile: the button turns, her tweets page by infinite scroll.
    bob.go(f"u/{alice.username}")
    page = bob.page
    page.get_by_role("button", name="Follow", exact=True).click()
    page.get_by_role("button", name="Unfollow").wait_for()
    tweets = page.locator("article.tweet")
    tweets.nth(19).wait_for()
    assert tweets.count() == 20
    tweets.last.scroll_into_view_if_needed()
    tweets.nth(21).wait_for()
    assert page.locator("a[data-nav=u]").is_visible()

    # Alice's home: follow notification badge arrives live (she never reloads).
    alice.go("notifications")
    alice.page.evaluate("window.__same_page = true")
    alice.page.locator('.tabs a[data-type="follow"] .badge').wait_for()
    assert alice.nav_badge("notifications").inner_text() == "1"

    # Bob's home starts from here; Alice posts, with the counter counting down from 280.
    bob.go("home")
    page.locator("article.tweet").first.wait_for()
    alice.go("home")
    compose = alice.page.get_by_label("Tweet text")
    compose.fill("x" * 281)
    assert alice.page.get_by_test_id("counter").inner_text() == "-1"
    assert alice.page.get_by_role("button", name="Post").is_disabled()
    text = "Tea party at the March Hare's, 4 pm. Bring a riddle! https://example.org/tea"
    compose.fill(text)
    assert alice.page.get_by_test_id("counter").inner_text() == str(280 - len(text))
    alice.page.get_by_role("button", name="Post").click()
    alice.page.locator("article.tweet", has_text=text).wait_for()

    # Bob sees the new-posts bar without reloading, and the tweet once he clicks it.
    bar = page.get_by_role("button", name=re.compile(r"Show \d+ new posts?"))
    bar.wait_for(timeout=30_000)  # pushed after the fan-out (the poll is every 60 s)
    assert page.locator("article.tweet", has_text=text).count() == 0
    # it stays in view while he scrolls down his timeline
    page.evaluate("scrollTo(0, 2000)")
    page.wait_for_function("scrollY > 1000")
    top = bar.bounding_box()["y"]
    assert 0 <= top < 200, top
    page.evaluate("scrollTo(0, 0)")
    bob.shot(shots, "timeline")
    assert bob.accessibility() == [], "timeline"
    bar.click()
    mine = page.locator("article.tweet", has_text=text)
    mine.wait_for()
    assert bar.count() == 0

    # Bob likes and retweets: each button names the tweet it acts on
    like = mine.get_by_role("button", name=re.compile("^Like "))
    assert like.get_attribute("aria-label") == f"Like Alice Liddell's tweet: {text[:40]}…"
    like.click()
    mine.get_by_role("button", name=re.compile("^Unlike ")).wait_for()
    mine.get_by_role("button", name=re.compile("^Retweet ")).click()
    mine.get_by_role("button", name=re.compile("^Undo retweet ")).wait_for()
    # His timeline read again before the counters settle: her tweet and his retweet of it shown
    # once, as Twitter does, under "You retweeted" (issue 47 item 15), counting his retweet.
    tweet_id = mine.get_attribute("data-tweet-id")
    copies = page.locator(f'article.tweet[data-tweet-id="{tweet_id}"]')
    for _ in range(60):  # his retweet reaches his own home timeline through the stream
        page.reload()
        copies.first.wait_for()
        if copies.locator(".retweeted-by").count() == 1:
            break
        page.wait_for_timeout(250)
    assert copies.count() == 1
    assert copies.locator(".retweeted-by").inner_text().strip() == "You retweeted"
    assert copies.locator(".act.retweet span").all_inner_texts() == ["1"]
    # Undoing it: his retweet leaves, her tweet stays in its place, no count goes below zero.
    copies.first.get_by_role("button", name=re.compile("^Undo retweet ")).click()
    page.locator(".retweeted-by").wait_for(state="detached")
    assert copies.count() == 1
    assert copies.locator(".act.retweet span").inner_text() == ""
    assert copies.get_by_role("button", name=re.compile("^Retweet ")).count() == 1
    mine.get_by_role("button", name=re.compile("^Reply to ")).click()
    mine.get_by_label("Reply text").fill(f"@{alice.username} I'll bring the raven riddle.")
    mine.get_by_role("button", name="Reply", exact=True).click()
    page.get_by_text("Your reply was posted.").wait_for()

    alice.go("notifications")
    for kind in ("like", "retweet", "reply"):
        badge = alice.page.locator(f'.tabs a[data-type="{kind}"] .badge')
        badge.wait_for(timeout=20_000)
        assert badge.inner_text() == "1", kind
    alice.page.locator("li.notification", has_text="liked your tweet").wait_for()
    assert alice.page.evaluate("window.__same_page === true"), "the page reloaded"
    alice.shot(shots, "notifications")
    assert alice.accessibility() == [], "notifications"

    # Mark one type read, then all.
    alice.page.locator('.tabs a[data-type="like"]').click()
    alice.page.get_by_role("button", name="Mark likes read").click()
    alice.page.locator('.tabs a[data-type="like"] .badge').wait_for(state="detached")
    assert alice.page.locator('.tabs a[data-type="reply"] .badge').inner_text() == "1"
    alice.page.get_by_role("button", name="Mark all read").click()
    alice.nav_badge("notifications").wait_for(state="detached")

    # The reply's own page: the thread above it, "Replying to @alice", its full date and time;
    # her link opens apart from the app, without a referrer.
    mine.locator("a.when").click()
    page.get_by_role("heading", name="Replies").wait_for()
    page.locator("article.tweet", has_text="the raven riddle").locator("a.when").click()
    page.locator(".thread article.tweet", has_text=text).wait_for()
    main = page.locator("section.page > article.tweet")
    main.get_by_role("link", name=f"Replying to @{alice.username}").wait_for()
    assert re.search(r"\d{4}", main.locator(".full-time").inner_text())
    link = page.locator(".thread a", has_text="https://example.org/tea")
    assert link.get_attribute("href") == "https://example.org/tea"
    assert link.get_attribute("rel") == "noopener noreferrer nofollow"
    # Her tweet's page lists Bob's reply; he deletes it there and its count follows.
    page.locator(".thread a.when").click()
    page.get_by_role("heading", name="Replies").wait_for()
    original = page.locator("section.page > article.tweet")
    original.locator(".act.reply span").filter(has_text="1").wait_for()
    reply = page.locator("article.tweet", has_text="the raven riddle")
    reply.get_by_role("button", name=re.compile("^Delete your tweet")).click()
    reply.wait_for(state="detached")
    page.get_by_text("No replies yet.").wait_for()
    assert original.locator(".act.reply span").inner_text() == ""

    # Bob has her profile open when she follows him back: it says so without a reload.
    bob.go(f"u/{alice.username}")
    page.get_by_test_id("relationship").filter(has_text="Following").wait_for()
    assert page.locator('a[data-nav="u"]').get_attribute("class").split().count("on") == 0

    # Alice's profile as Bob sees it: counts, the relationship badge, the degree.
    alice.go(f"u/{bob.username}")
    alice.page.get_by_test_id("relationship").wait_for()
    assert alice.page.get_by_test_id("relationship").inner_text() == "Follows you"
    alice.page.get_by_role("button", name="Follow", exact=True).click()
    alice.page.get_by_test_id("relationship").filter(has_text="Friends").wait_for()
    page.get_by_test_id("relationship").filter(has_text="Friends").wait_for()
    page.locator(".degree", has_text="1st").wait_for()
    counts = page.locator(".counts").inner_text()
    assert "1 Follower" in counts and "1 Followers" not in counts, counts
    page.get_by_role("button", name="Message").wait_for()
    page.locator("article.tweet").first.wait_for()
    bob.shot(shots, "profile")
    assert bob.accessibility() == [], "profile"
    page.get_by_role("link", name=re.compile("Followers")).first.click()
    page.locator(".user-rows li", has_text=bob.username).wait_for()


def test_direct_messages_live_both_ways_history_unread_and_reconnect(
    stack, new_user, person, shots
) -> None:
    a, a_token = api_user(stack, new_user, "amy", "Amy Pond", "Raggedy doctor enthusiast.")
    b, b_token = api_user(stack, new_user, "rory", "Rory Williams", "Nurse. Waited 2000 years.")
    with stack.client(a_token) as amy_api, stack.client(b_token) as rory_api:
        amy_api.put(f"/v1/users/me/following/{b['id']}").raise_for_status()
        rory_api.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
        conversation = amy_api.post("/v1/conversations", json={"participant_id": b["id"]}).json()
        path = f"/v1/conversations/{conversation['id']}/messages"
        for i in range(1, 41):  # a history longer than one page, to scroll up through
            sender = amy_api if i % 2 else rory_api
            sender.post(path, json={"text": f"history {i:02d}"}).raise_for_status()
        rory_api.post(f"/v1/conversations/{conversation['id']}/read").raise_for_status()

    amy, rory = person(), person()
    # Amy's WebSocket goes through a route the test can cut, as a dropped network would.
    sockets: list = []

    def through(ws) -> None:
        ws.connect_to_server()
        sockets.append(ws)

    amy.page.route_web_socket(re.compile(r"^ws://"), through)
    amy.log_in(a["username"])
    rory.log_in(b["username"])
    amy.page.get_by_role("heading", name="Home").wait_for()
    rory.page.get_by_role("heading", name="Home").wait_for()

    # Amy opens the conversation from Rory's profile; older history loads by scrolling up.
    amy.go(f"u/{b['username']}")
    amy.page.get_by_test_id("relationship").filter(has_text="Friends").wait_for()
    amy.page.get_by_role("button", name="Message").click()
    box = amy.page.get_by_test_id("message-box")
    box.get_by_text("history 40").wait_for()
    assert box.get_by_text("history 01", exact=True).count() == 0
    for _ in range(10):
        if box.get_by_text("history 01", exact=True).count():
            break
        box.evaluate("el => { el.scrollTop = 0; }")
        amy.page.wait_for_timeout(400)
    box.get_by_text("history 01", exact=True).wait_for()
    box.get_by_text("This is the start of your conversation.").wait_for()

    # Amy types; the message is acknowledged on her side and arrives live on Rory's.
    amy.page.get_by_label("Message").fill("Fish fingers and custard tonight?")
    amy.page.get_by_role("button", name="Send").click()
    box.locator(".message.mine", has_text="Fish fingers").wait_for()
    box.locator(".message.pending").wait_for(state="detached")
    # her conversation list shows it as the last message at once (it kept the old one)
    amy.page.locator("li[data-conversation] .snippet", has_text="Fish fingers").wait_for()
    rory.nav_badge("messages").filter(has_text="1").wait_for()
    rory.page.locator('a[data-nav="messages"]').click()
    item = rory.page.locator("li[data-conversation]", has_text="Fish fingers")
    item.locator(".badge").filter(has_text="1").wait_for()
    item.click()
    rory.page.get_by_test_id("message-box").get_by_text("Fish fingers and custard").wait_for()
    rory.nav_badge("messages").wait_for(state="detached")
    item.locator(".badge").wait_for(state="detached")

    # Rory answers; it arrives live in Amy's open conversation.
    rory.page.get_by_label("Message").fill("Only if I am not a plastic Roman again.")
    rory.page.get_by_role("button", name="Send").click()
    box.get_by_text("Only if I am not a plastic Roman again.").wait_for()

    # The connection drops: the client says so, reconnects, and live messages flow again.
    assert amy.live().inner_text() == "● Live"
    sockets[-1].close()
    amy.live().filter(has_text="Reconnecting").wait_for()
    amy.live().filter(has_text="Live").wait_for()
    assert len(sockets) >= 2, "the client did not reconnect"
    # each connect opened with a ticket of its own, never with the session's token
    urls = [ws.url for ws in sockets]
    assert all("?ticket=wst_" in url and token_of(amy) not in url for url in urls), urls
    assert len(set(urls)) == len(urls) == len(amy.sockets)
    rory.page.get_by_label("Message").fill("Still there?")
    rory.page.get_by_role("button", name="Send").click()
    box.get_by_text("Still there?").wait_for()
    rory.page.get_by_test_id("message-box").get_by_text("Still there?").wait_for()
    rory.shot(shots, "conversation")
    assert rory.accessibility() == [], "conversation"


def test_a_dead_or_unregistered_connection_is_noticed_and_what_it_missed_shown(
    stack, new_user, person
) -> None:
    # given two friends with a conversation; Amy's socket goes through a route that can go
    # silent (a network gone without a close), and her page's clock can be moved forward
    a, a_token = api_user(stack, new_user, "amy", "Amy Pond")
    b, b_token = api_user(stack, new_user, "rory", "Rory Williams")
    with stack.client(a_token) as amy_api, stack.client(b_token) as rory_api:
        amy_api.put(f"/v1/users/me/following/{b['id']}").raise_for_status()
        rory_api.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
        conversation = amy_api.post("/v1/conversations", json={"participant_id": b["id"]}).json()
    path = f"/v1/conversations/{conversation['id']}/messages"
    sockets: list = []
    silent: set = set()

    def through(ws) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda frame: ws not in silent and server.send(frame))
        server.on_message(lambda frame: ws not in silent and ws.send(frame))
        sockets.append(ws)

    amy = person()
    in_flight = track_requests(amy)
    amy.page.clock.install()
    amy.page.route_web_socket(re.compile(r"^ws://"), through)
    amy.log_in(a["username"])
    amy.page.get_by_role("heading", name="Home").wait_for()
    amy.go(f"messages/{conversation['id']}")
    box = amy.page.get_by_test_id("message-box")
    box.get_by_text("This is the start of your conversation.").wait_for()
    amy.live().filter(has_text="Live").wait_for()

    # when her socket goes silent and Rory writes meanwhile
    silent.add(sockets[-1])
    with stack.client(b_token) as rory_api:
        rory_api.post(path, json={"text": "Are you there?"}).raise_for_status()
    # then within a heartbeat (5 minutes: web/src/live.js) and its answer's wait she notices,
    # reconnects and shows it
    amy.page.clock.fast_forward("05:00")
    amy.page.clock.fast_forward("00:10")
    amy.live().filter(has_text="Reconnecting").wait_for()
    box.get_by_text("Are you there?").wait_for(timeout=SETTLE_MS)
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    assert len(sockets) >= 2

    # when the server forgets her connection (the socket stays open: API Gateway still answers
    # its heartbeats) and Rory writes again, once her page has read what it shows
    settled(amy, in_flight)
    unregister(stack, a["id"])
    with stack.client(b_token) as rory_api:
        rory_api.post(path, json={"text": "Hello?"}).raise_for_status()
    # then the counts' safety net (10 minutes: web/src/app.js) finds a message no push brought,
    # her ping's pong says the connection is not registered: she reconnects and shows it
    amy.page.clock.fast_forward("10:00")
    box.get_by_text("Hello?").wait_for(timeout=SETTLE_MS)
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    assert len(sockets) >= 3

    # when it is forgotten again and she sends: the refused frame sends it over HTTP instead
    unregister(stack, a["id"])
    amy.page.get_by_label("Message").fill("Here! The network was down.")
    amy.page.get_by_role("button", name="Send").click()
    box.locator(".message.mine", has_text="Here! The network was down.").wait_for()
    box.locator(".message.pending").wait_for(state="detached", timeout=SETTLE_MS)
    assert box.locator(".message.failed").count() == 0
    amy.live().filter(has_text="Live").wait_for(timeout=SETTLE_MS)
    assert len(sockets) >= 4
    with stack.client(b_token) as rory_api:
        texts = [m["text"] for m in rory_api.get(path).json()["items"]]
    assert texts[0] == "Here! The network was down.", texts


def test_discover_location_cards_swipes_and_the_match(stack, new_user, person, shots) -> None:
    lat, lon = random.uniform(-60, 60), random.uniform(-179, 179)  # a spot of this test's own
    a, _ = api_user(stack, new_user, "dana", "Dana Scully", "Skeptic. Coffee first.")
    b, _ = api_user(stack, new_user, "fox", "Fox Mulder", "The truth is out there, 1 km away.")
    # Dana lets the page read her position; Fox types his coordinates.
    dana = person(geolocation={"latitude": lat, "longitude": lon}, permissions=["geolocation"])
    fox = person()
    dana.log_in(a["username"])
    fox.log_in(b["username"])

    dana.page.get_by_role("heading", name="Home").wait_for()
    dana.go("discover")
    dana.page.get_by_role("button", name="Use my location").click()
    dana.page.get_by_text("Nobody new nearby").wait_for()

    fox.page.get_by_role("heading", name="Home").wait_for()
    fox.go("discover")
    fox.page.get_by_label("Latitude").fill(f"{lat + 1.2 / 111.195:.6f}")
    # an empty longitude is refused, not taken for 0
    fox.page.get_by_role("button", name="Set location").click()
    fox.page.get_by_role("alert").filter(has_text="Type a latitude between -90 and 90").wait_for()
    assert fox.page.get_by_label("Longitude").is_visible()
    fox.page.get_by_label("Longitude").fill(f"{lon:.6f}")
    fox.page.get_by_role("button", name="Set location").click()
    card = fox.page.locator(f'.swipe-card[data-user="{a["username"]}"]')
    card.wait_for()
    # 1.2 km away: told in whole km, within 1.5 km of the truth (API.md)
    assert re.fullmatch(r"[12] km away", card.get_by_test_id("distance").inner_text())
    fox.shot(shots, "discover")
    assert fox.accessibility() == [], "discover"
    card.get_by_role("button", name="Swipe right").click()
    fox.page.get_by_text("Nobody new nearby").wait_for()

    # Her feed ran dry before Fox came: her empty deck asks again by itself (the server looks
    # afresh 15 s after a feed ran dry), no Refresh clicked.
    mine = dana.page.locator(f'.swipe-card[data-user="{b["username"]}"]')
    mine.wait_for(timeout=45_000)
    mine.get_by_role("button", name="Swipe right").click()

    # Both see the match: Dana from her swipe's answer, Fox from the pushed event.
    dana.page.get_by_role("dialog", name="It's a match").wait_for()
    fox.page.get_by_role("dialog", name="It's a match").wait_for()
    fox.page.get_by_role("button", name="Send a message").click()
    fox.page.get_by_label("Message").fill("Dana, it's me.")
    fox.page.get_by_role("button", name="Send").click()
    dana.page.get_by_role("button", name="Send a message").click()
    dana.page.get_by_test_id("message-box").get_by_text("Dana, it's me.").wait_for()
    assert dana.page.url.split("#")[1] == fox.page.url.split("#")[1]
    # a match's profile offers Message (they are not friends)
    fox.go(f"u/{a['username']}")
    fox.page.get_by_role("button", name="Mute").wait_for()
    fox.page.get_by_role("button", name="Message").click()
    fox.page.get_by_test_id("message-box").get_by_text("Dana, it's me.").wait_for()


def test_failure_paths_wrong_password_taken_username_and_revoked_session(
    stack, new_user, person, shots
) -> None:
    body, _ = new_user("sam")
    name = body["user"]["username"]
    laptop, phone = person(), person()
    in_flight = track_requests(phone)

    laptop.log_in(name, "wrong password")
    wrong = laptop.page.get_by_role("alert").filter(has_text="The login or the password is wrong.")
    wrong.wait_for()
    laptop.page.get_by_label("Password").fill("password1")
    laptop.page.get_by_role("button", name="Log in").click()
    laptop.page.get_by_role("heading", name="Home").wait_for()

    phone.open("signup")
    form = phone.page.locator("form.form")
    form.get_by_label("Username").fill(name.upper())
    form.get_by_label("Email").fill(f"other-{name}@example.com")
    form.get_by_label("Password").fill("password1")
    form.get_by_role("button", name="Create account").click()
    phone.page.get_by_role("alert").filter(has_text="That username is already taken.").wait_for()
    phone.log_in(name)
    phone.page.get_by_role("heading", name="Home").wait_for()

    # The laptop revokes the phone's session: the phone is back at the login screen. Its tab is
    # hidden, so it does not poll: only its WebSocket, closed by the server, can tell it (once
    # the page has settled: its first requests, if still under way, would see the 401 too).
    phone.live().filter(has_text="Live").wait_for()
    settled(phone, in_flight)
    phone.page.evaluate(
        "Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    laptop.go("sessions")
    others = laptop.page.locator("ul.sessions li:not(.current)", has_text="(web)")
    others.first.wait_for()
    assert others.count() == 1
    assert laptop.page.locator("ul.sessions li.current").count() == 1
    laptop.shot(shots, "sessions")
    assert laptop.accessibility() == [], "sessions"
    others.first.get_by_role("button", name="Revoke").click()
    laptop.page.get_by_text("The session was revoked").wait_for()
    phone.page.get_by_text("Your session has ended").wait_for(timeout=30_000)
    phone.page.get_by_role("button", name="Log in").wait_for()

    # Logging out ends the laptop's own session.
    laptop.page.get_by_role("button", name="Log out").first.click()
    laptop.page.get_by_text("You are logged out.").wait_for()


def track_requests(user: WebUser) -> set[object]:
    """The page's HTTP requests still under way (a set the page's events keep)."""
    in_flight: set[object] = set()
    user.page.on("request", lambda request: in_flight.add(request))
    user.page.on("requestfinished", lambda request: in_flight.discard(request))
    user.page.on("requestfailed", lambda request: in_flight.discard(request))
    return in_flight


def settled(user: WebUser, in_flight: set[object]) -> None:
    """Wait until none of the page's requests is under way (cold functions answer late)."""
    for _ in range(300):
        if not in_flight:
            return
        user.page.wait_for_timeout(100)
    pytest.fail(f"the page's requests never finished: {in_flight}")


def test_block_and_mute_from_a_profile(stack, new_user, person) -> None:
    # given two friends (issue 23: block and mute from a profile)
    a, a_token = api_user(stack, new_user, "ann", "Ann Shaw")
    b, b_token = api_user(stack, new_user, "ben", "Ben Ross")
    with stack.client(a_token) as ann_api, stack.client(b_token) as ben_api:
        ann_api.put(f"/v1/users/me/following/{b['id']}").raise_for_status()
        ben_api.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
    ann, ben = person(), person()
    ann.log_in(a["username"])
    ben.log_in(b["username"])
    ann.page.get_by_role("heading", name="Home").wait_for()
    ben.page.get_by_role("heading", name="Home").wait_for()
    follow = re.compile(r"^(Follow|Unfollow|Message)$")

    # when Ann blocks Ben from his profile: the badge shows, follow and message are gone
    ann.go(f"u/{b['username']}")
    page = ann.page
    page.get_by_test_id("relationship").filter(has_text="Friends").wait_for()
    page.get_by_role("button", name="Block", exact=True).click()
    page.get_by_test_id("blocking").filter(has_text="Blocked").wait_for()
    page.get_by_role("button", name="Unblock").wait_for()
    page.get_by_test_id("relationship").wait_for(state="detached")  # the follows ended
    assert page.get_by_role("button", name=follow).count() == 0
    ann.go("blocked")
    page.get_by_test_id("blocked").locator("li", has_text=b["username"]).wait_for()
    ann.go(f"u/{b['username']}")

    # then Ben sees that she blocks him (his side follows within seconds) and cannot follow
    ben.go(f"u/{a['username']}")
    badge = ben.page.get_by_test_id("blocked-by")
    for _ in range(12):
        ben.page.get_by_role("button", name="Mute").wait_for()  # the flags have loaded
        if badge.count():
            break
        ben.page.wait_for_timeout(500)
        ben.page.reload()
    assert badge.inner_text() == "Blocked you"
    assert ben.page.get_by_role("button", name=follow).count() == 0

    # when Ann unblocks: the follow button is back, no follow restored
    page.get_by_role("button", name="Unblock").click()
    page.get_by_role("button", name="Follow", exact=True).wait_for()
    assert page.get_by_test_id("blocking").count() == 0

    # and she mutes him, which the server keeps, then unmutes
    page.get_by_role("button", name="Mute", exact=True).click()
    page.get_by_test_id("muting").wait_for()
    ann.go("blocked")
    page.get_by_test_id("muted").locator("li", has_text=b["username"]).wait_for()
    page.get_by_test_id("blocked").get_by_text("You block nobody.").wait_for()
    ann.go(f"u/{b['username']}")
    page.get_by_role("button", name="Unmute").click()
    page.get_by_role("button", name="Mute", exact=True).wait_for()
    assert page.get_by_test_id("muting").count() == 0
    assert page.get_by_role("button", name="Follow", exact=True).is_visible()


# Every screen of the client, for the accessibility check and the phone screenshots
# (docs/screenshots/phone-<name>.png): a new screen is one line, its route (with the world's
# names in braces) and what shows it is ready.
SCREENS: list[tuple[str, str, Any]] = [
    ("home", "home", lambda page: page.locator("article.tweet").first),
    ("tweet", "tweet/{reply}", lambda page: page.locator(".thread article.tweet").first),
    ("profile", "u/{friend}", lambda page: page.get_by_role("button", name="Mute")),
    ("followers", "u/{friend}/followers", lambda page: page.locator(".user-rows li").first),
    ("notifications", "notifications", lambda page: page.locator("li.notification").first),
    ("messages", "messages", lambda page: page.locator("li[data-conversation]").first),
    (
        "conversation",
        "messages/{conversation}",
        lambda page: page.get_by_test_id("message-box").locator(".message").first,
    ),
    ("discover", "discover", lambda page: page.locator(".swipe-card").first),
    ("search", "search/{friend}", lambda page: page.get_by_test_id("person").first),
    ("hashtag", "tag/meetup", lambda page: page.locator("article.tweet").first),
    ("sessions", "sessions", lambda page: page.locator("ul.sessions li").first),
    ("settings", "settings", lambda page: page.locator("ul.sessions li").first),
    ("blocked", "blocked", lambda page: page.get_by_test_id("blocked").locator("li").first),
    ("more", "more", lambda page: page.get_by_role("button", name="Log out")),
    ("no-such-tweet", "tweet/abc", lambda page: page.get_by_role("alert")),
]
# The moderators' screens, seen by the stack's admin (the world holds an open and a closed case).
MODERATOR_SCREENS = [
    ("moderation", "moderation", lambda page: page.locator("li.case").first),
    ("moderation-closed", "moderation/closed", lambda page: page.locator("li.case").first),
]
SIGNED_OUT = [
    ("login", "login", lambda page: page.get_by_role("button", name="Log in")),
    ("signup", "signup", lambda page: page.get_by_role("button", name="Create account")),
    ("forgot", "forgot", lambda page: page.get_by_role("button", name="Send the link")),
    # without the email's link's token: it says so (with it: test_change_and_reset_password)
    ("reset", "reset-password", lambda page: page.get_by_role("alert")),
]
LONG_NAME = "Featherstonehaugh-Cholmondeley-Marjoribanks-Smythe"  # 50 characters, unbroken


def test_every_screen_at_phone_size_is_accessible_and_fits(stack, new_user, person, shots) -> None:
    # given a person at phone size who signed up in the page, with a friend of the longest
    # name, tweets and a reply, a conversation, notifications, a block and a Discover spot
    phone = person(viewport=PHONE, is_mobile=True, has_touch=True)
    found: dict[tuple[str, str], list] = {}  # every screen's findings, reported together
    for name, route, ready in SIGNED_OUT:
        phone.open(route)
        ready(phone.page).wait_for()
        found[(name, "phone")] = phone.accessibility()
        phone.shot(shots, f"phone-{name}")
        phone.page.set_viewport_size(VIEWPORT)
        found[(name, "desktop")] = phone.accessibility()
        phone.page.set_viewport_size(PHONE)
    phone.sign_up(unique_name("pia"))
    me, token = phone.page.evaluate("localStorage.getItem('warble.token')"), token_of(phone)
    friend, friend_token = api_user(stack, new_user, "quin", LONG_NAME, "Tea, maps and long walks.")
    other, _ = api_user(stack, new_user, "rex", "Rex Blocked")
    lat, lon = random.uniform(-60, 60), random.uniform(-179, 179)
    with stack.client(token) as mine, stack.client(friend_token) as theirs:
        me = mine.get("/v1/users/me").json()
        mine.patch("/v1/users/me", json={"display_name": "Pia Phone"}).raise_for_status()
        mine.put(f"/v1/users/me/following/{friend['id']}").raise_for_status()
        theirs.put(f"/v1/users/me/following/{me['id']}").raise_for_status()
        mine.put(f"/v1/users/me/blocks/{other['id']}").raise_for_status()
        first = theirs.post("/v1/tweets", json={"text": f"{NOTES[4]} #meetup"}).json()
        theirs.post("/v1/tweets", json={"text": f"{NOTES[2]} https://example.org/coffee"})
        reply = mine.post("/v1/tweets", json={"text": "Count me in!", "reply_to": first["id"]})
        mine.put(f"/v1/tweets/{first['id']}/like").raise_for_status()
        conversation = mine.post("/v1/conversations", json={"participant_id": friend["id"]})
        path = f"/v1/conversations/{conversation.json()['id']}/messages"
        theirs.post(path, json={"text": "Are we still on for Thursday?"}).raise_for_status()
        mine.post(path, json={"text": "Yes! 7 pm at the corner shop."}).raise_for_status()
        theirs.put("/v1/users/me/location", json={"lat": lat, "lon": lon}).raise_for_status()
        mine.put("/v1/users/me/location", json={"lat": lat + 0.01, "lon": lon})
        # two reports: one case stays open, the other the admin dismisses
        reported = {"target_type": "tweet", "target_id": first["id"], "reason": "spam"}
        mine.post("/v1/reports", json=reported).raise_for_status()
        mine.post(
            "/v1/reports",
            json={"target_type": "user", "target_id": other["id"], "reason": "impersonation"},
        ).raise_for_status()
        phone.page.evaluate(
            "([key, spot]) => localStorage.setItem(key, spot)",
            [f"warble.location.{me['id']}", json.dumps({"lat": lat + 0.01, "lon": lon})],
        )
    with stack.client(token) as mine:  # the hashtag page lists it once the stream indexed it
        eventually(lambda: mine.get("/v1/hashtags/meetup/tweets").json()["items"], SETTLE_MS / 1000)
    world = {
        "friend": friend["username"],
        "reply": reply.json()["id"],
        "conversation": conversation.json()["id"],
    }
    phone.page.reload()
    phone.page.get_by_role("heading", name="Home").wait_for()
    page = phone.page

    # then the tab bar names every link, and every screen fits the phone, has no serious or
    # critical accessibility violation at phone or desktop size, and is pictured
    for label in ("Home", "Search", "Notifications", "Messages", "Discover", "More"):
        link = page.get_by_role("link", name=re.compile(f"^{label}( \\d+ unread)?$"))
        assert link.is_visible(), label

    def check(user: WebUser, screens: list[tuple[str, str, Any]]) -> None:
        for name, route, ready in screens:
            user.go(route.format(**world))
            ready(user.page).wait_for(timeout=30_000)
            width = user.page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (name, width)
            found[(name, "phone")] = user.accessibility()
            user.shot(shots, f"phone-{name}")
            user.page.set_viewport_size(VIEWPORT)
            found[(name, "desktop")] = user.accessibility()
            user.page.set_viewport_size(PHONE)

    check(phone, SCREENS)
    # (the moderators' screens in the admin's own browser context, at the same sizes)
    admin = person(viewport=PHONE, is_mobile=True, has_touch=True)
    admin.log_in("warble_admin", "warble-admin-local")
    admin.page.get_by_role("heading", name="Home").wait_for()
    with stack.client(token_of(admin)) as moderator:
        case = _open_case_of(moderator, other["id"])
        path = f"/v1/admin/cases/{case['id']}/resolve"
        moderator.post(path, json={"action": "dismiss"}).raise_for_status()
    check(admin, MODERATOR_SCREENS)
    assert {where: v for where, v in found.items() if v} == {}

    # and the details the phone report found: the back arrow is an arrow, a bad address says
    # so once in words, the sign-up's session is named from the browser
    phone.go(f"tweet/{world['reply']}")
    back = page.get_by_role("button", name="Back")
    assert back.locator("svg").bounding_box()["width"] == 20  # not squeezed to a dot
    page.locator(".thread article.tweet").first.wait_for()
    phone.go("tweet/abc")
    page.get_by_role("alert").wait_for()
    assert page.get_by_role("alert").all_inner_texts() == ["No such tweet."]
    phone.go("sessions")
    assert page.locator("ul.sessions li.current b").inner_text() == "Chromium on Linux (web)"
    page.get_by_test_id("blocked").wait_for(state="detached")  # not under Sessions
    phone.go("more")
    page.get_by_role("button", name="Log out").click()
    page.get_by_text("You are logged out.").wait_for()


def test_change_and_reset_password_and_download_my_data(stack, person, shots) -> None:
    # given a person signed up in the page, also logged in on another device
    ana = person()
    ana.sign_up(unique_name("ana"))
    address = f"{ana.username}@example.com"
    with stack.client() as anonymous:
        other = anonymous.post(
            "/v1/auth/login", json={"login": ana.username, "password": "password1"}
        )
    other_token = other.json()["token"]
    page = ana.page

    # when she changes her password in Settings, a wrong current one first
    ana.go("settings")
    form = page.get_by_test_id("change-password")
    page.locator("ul.sessions li").nth(1).wait_for()  # both sessions listed
    form.get_by_label("Current password").fill("not-my-password")
    form.get_by_label("New password").fill("changed-pass-1")
    form.get_by_role("button", name="Change password").click()
    form.get_by_role("alert").filter(has_text="The current password is wrong.").wait_for()
    form.get_by_label("Current password").fill("password1")
    form.get_by_role("button", name="Change password").click()
    page.get_by_text("Password changed. Your other sessions were signed out.").wait_for()
    # then the other device is signed out, this one stays, and the list shows this one alone
    with stack.client(other_token) as gone:
        assert gone.get("/v1/users/me").status_code == 401
    eventually(lambda: page.locator("ul.sessions li").count() == 1)
    ana.shot(shots, "settings")
    assert ana.accessibility() == [], "settings"

    # and "Download my data" saves everything as one JSON file
    with page.expect_download() as download:
        page.get_by_role("button", name="Download my data").click()
    saved = json.loads(Path(download.value.path()).read_text())
    assert saved["user"]["username"] == ana.username and saved["user"]["email"] == address
    assert [s["current"] for s in saved["sessions"]] == [True]

    # when she logs out and forgets the password: "Forgot your password?" mails a link
    page.get_by_role("navigation", name="Warble").get_by_role("button", name="Log out").click()
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill(address)
    page.get_by_role("button", name="Send the link").click()
    page.get_by_role("status").filter(has_text="a link to choose a new password").wait_for()
    ana.shot(shots, "forgot-sent")
    assert ana.accessibility() == [], "forgot-sent"

    def mails() -> list[dict]:
        listed = httpx.get(f"{stack.moto}/_aws/ses", timeout=10).json()["messages"]
        return [m for m in listed if address in m["Destination"]["ToAddresses"]]

    eventually(lambda: len(mails()) == 1)
    text = mails()[0]["Body"]["text_part"]
    link = next(word for word in text.split() if word.startswith(stack.web.rstrip("/")))

    # then the link opens the reset page, which takes the token out of the address bar
    page.goto(link)
    page.get_by_role("heading", name="Choose a new password").wait_for()
    assert "token=" not in page.url
    assert ana.accessibility() == []
    page.get_by_label("New password", exact=True).fill("after-reset-1")
    page.get_by_label("New password, again").fill("after-reset-1")
    ana.shot(shots, "reset")
    assert ana.accessibility() == [], "reset"
    page.get_by_role("button", name="Set the new password").click()
    page.get_by_text("Your password was changed").wait_for()

    # and she logs in with the new password; the link does not work twice
    ana.log_in(ana.username, "after-reset-1")
    page.get_by_role("heading", name="Home").wait_for()
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("after-reset-2")
    page.get_by_label("New password, again").fill("after-reset-2")
    page.get_by_role("button", name="Set the new password").click()
    page.get_by_role("alert").filter(has_text="This link is unknown, used or expired").wait_for()


def test_deleting_my_account_in_settings_is_final(stack, new_user, person, shots) -> None:
    # given a person signed up in the page, and someone who looks her up
    _, observer = new_user("obs")
    bo = person()
    bo.sign_up(unique_name("bo"))
    page = bo.page
    bo.go("settings")
    leave = page.get_by_test_id("delete-account")
    # the button waits for the confirmation; a wrong password is said and deletes nothing
    assert leave.get_by_role("button", name="Delete my account").is_disabled()
    leave.get_by_label("Password").fill("not-my-password")
    leave.get_by_label("I understand that this cannot be undone").check()
    bo.shot(shots, "delete-account")
    assert bo.accessibility() == [], "delete-account"
    leave.get_by_role("button", name="Delete my account").click()
    leave.get_by_role("alert").filter(has_text="The password is wrong.").wait_for()
    with stack.client(observer) as other:
        assert other.get(f"/v1/users/by-username/{bo.username}").status_code == 200
    # when the right one is given, then the page is signed out and the account is gone
    leave.get_by_label("Password").fill("password1")
    leave.get_by_role("button", name="Delete my account").click()
    page.get_by_text("Your account was deleted.").wait_for()
    page.get_by_role("button", name="Log in").wait_for()
    with stack.client(observer) as other:
        assert other.get(f"/v1/users/by-username/{bo.username}").status_code == 404
        login = {"login": bo.username, "password": "password1"}
        assert other.post("/v1/auth/login", json=login).status_code == 401


def test_swagger_ui_renders_from_the_stack_alone(browser, stack) -> None:
    # given Swagger UI at /v1/docs (issue 18: its script came from a CDN, a blank page offline)
    context = browser.new_context()
    page = context.new_page()
    asked: list[str] = []
    refused: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.on("console", lambda m: "Content Security Policy" in m.text and refused.append(m.text))
    try:
        answer = page.goto(f"{stack.http}/v1/docs")
        # (its Content-Security-Policy runs no inline script: issue 33 item 7)
        assert (
            answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
        )
        # then it renders the whole document, every operation a block of its own
        page.locator(".opblock").first.wait_for(timeout=SETTLE_MS)
        assert page.locator(".opblock").count() >= 40
        assert page.get_by_text("Warble API").first.is_visible()
        # and asks nothing of anyone but the stack, and breaks no rule of its policy
        assert asked and all(url.startswith(f"{stack.http}/") for url in asked), asked
        assert refused == []
    finally:
        context.close()
