"""The smaller things people met in the web client (issue 47, item 15), in a real browser
(headless Chromium, as tests/e2e/test_web_client.py drives it): a shared link's Back stays in
the app, a deep link survives the login, the conversation list never empties when a message
comes in, a server failure is said in words, and a block asks first."""

from __future__ import annotations

import pytest

from tests.e2e.test_web_client import api_user, browser, person  # noqa: F401  fixtures
from tests.support.browser import PHONE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]


def test_a_shared_link_survives_the_login_and_its_back_arrow_stays_in_the_app(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given a tweet of Tess's, and Sam, signed out, opening its link in a fresh tab
    tess, tess_token = api_user(stack, new_user, "tess", "Tess Tweeter")
    with stack.client(tess_token) as client:
        tweet = client.post("/v1/tweets", json={"text": "Look at this sunset."}).json()
    sam_user, _ = api_user(stack, new_user, "sam", "Sam Signed-out")
    sam = person()
    sam.open(f"tweet/{tweet['id']}")

    # when he logs in from there, then he lands on the tweet, not on Home
    sam.page.get_by_role("button", name="Log in").wait_for()
    sam.log_in(sam_user["username"])
    sam.page.locator("article.tweet", has_text="Look at this sunset.").wait_for()
    assert sam.page.url.endswith(f"#/tweet/{tweet['id']}")

    # when he opens the link afresh (signed in) and goes Back, then he stays in the app
    sam.page.goto("about:blank")
    sam.open(f"tweet/{tweet['id']}")
    sam.page.locator("article.tweet", has_text="Look at this sunset.").wait_for()
    sam.page.get_by_role("button", name="Back").click()
    sam.page.get_by_role("heading", name="Home").wait_for()
    assert sam.page.url.startswith(sam.web)
    # and a Back after following a link inside the app still goes back one step
    sam.go(f"u/{tess['username']}")
    sam.page.get_by_role("heading", name="Tess Tweeter").wait_for()
    sam.go(f"tweet/{tweet['id']}")
    sam.page.get_by_role("button", name="Back").click()
    sam.page.get_by_role("heading", name="Tess Tweeter").wait_for()
    assert sam.errors == []


def test_the_conversation_list_stays_while_a_message_comes_in(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Amy on her conversation list, two friends' conversations in it
    a, a_token = api_user(stack, new_user, "amy", "Amy Pond")
    others = [api_user(stack, new_user, name, name.title()) for name in ("rory", "clara")]
    paths = []
    with stack.client(a_token) as amy_api:
        for other, token in others:
            amy_api.put(f"/v1/users/me/following/{other['id']}").raise_for_status()
            with stack.client(token) as theirs:
                theirs.put(f"/v1/users/me/following/{a['id']}").raise_for_status()
            opened = amy_api.post("/v1/conversations", json={"participant_id": other["id"]})
            paths.append(f"/v1/conversations/{opened.json()['id']}/messages")
            amy_api.post(paths[-1], json={"text": f"Hello {other['username']}"})
    amy = person()
    amy.log_in(a["username"])
    amy.page.get_by_role("heading", name="Home").wait_for()
    amy.go("messages")
    rows = amy.page.locator("li[data-conversation]")
    rows.nth(1).wait_for()
    amy.live().filter(has_text="Live").wait_for()
    # (the fewest rows the list ever shows from here on)
    amy.page.evaluate(
        """() => {
          window.__fewest = document.querySelectorAll('li[data-conversation]').length;
          new MutationObserver(() => {
            const n = document.querySelectorAll('li[data-conversation]').length;
            window.__fewest = Math.min(window.__fewest, n);
          }).observe(document.body, {childList: true, subtree: true});
        }"""
    )

    # when Clara writes, then her conversation moves up with the message; the list never emptied
    with stack.client(others[1][1]) as clara:
        clara.post(paths[1], json={"text": "Tea at four?"}).raise_for_status()
    rows.first.filter(has_text="Tea at four?").wait_for()
    assert rows.count() == 2
    assert amy.page.evaluate("window.__fewest") == 2
    assert amy.errors == []


def test_a_server_failure_is_said_in_words_and_a_block_asks_first(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Bo signed in, and Pat's profile
    bo_user, _ = api_user(stack, new_user, "bo", "Bo Blocker")
    pat, _ = api_user(stack, new_user, "pat", "Pat Person")
    bo = person()
    bo.log_in(bo_user["username"])
    bo.page.get_by_role("heading", name="Home").wait_for()

    # when the server fails with a bare 500 (the network path cut here, as a broken function)
    def broken(route) -> None:
        route.fulfill(status=500, body="", headers={"Access-Control-Allow-Origin": "*"})

    bo.page.route("**/v1/users/by-username/**", broken)
    bo.go(f"u/{pat['username']}")
    # then the page says what it means in words, not the status code
    alert = bo.page.get_by_role("alert")
    alert.wait_for()
    assert "went wrong on Warble's side" in alert.inner_text()
    assert "500" not in alert.inner_text()
    bo.page.unroute("**/v1/users/by-username/**")

    # when he blocks Pat, then he is asked first; declined, nothing changes
    bo.page.reload()
    bo.page.get_by_role("heading", name="Pat Person").wait_for()
    asked: list[str] = []

    def answer(dialog) -> None:
        asked.append(dialog.message)
        (dialog.accept if len(asked) > 1 else dialog.dismiss)()

    bo.on_dialog = answer
    bo.page.get_by_role("button", name="Block", exact=True).click()
    bo.page.wait_for_timeout(500)
    assert asked and asked[0].startswith("Block Pat Person?")
    assert bo.page.get_by_test_id("blocking").count() == 0
    # accepted, the block is made
    bo.page.get_by_role("button", name="Block", exact=True).click()
    bo.page.get_by_test_id("blocking").wait_for()
    assert len(asked) == 2


def test_sign_up_errors_are_words_and_go_when_their_field_is_edited(
    person,  # noqa: F811
) -> None:
    # given the sign-up form with a password too short and an address without a domain's dot
    pia = person()
    pia.open("signup")
    form = pia.page.locator("form.form")
    form.get_by_label("Username").fill("pia_words")
    form.get_by_label("Email").fill("pia@example")
    form.get_by_label("Password").fill("short")
    form.get_by_role("button", name="Create account").click()
    # then each bad field is a sentence in words, not the validator's
    alert = pia.page.get_by_role("alert")
    alert.filter(has_text="Password must be at least 8 characters long.").wait_for()
    assert "String should" not in alert.inner_text()
    assert "Email is not a valid email address." in alert.inner_text()
    # when she edits the password, what was said about it goes; the rest stays until edited
    form.get_by_label("Password").fill("long enough now")
    assert "Password" not in alert.inner_text()
    assert "Email is not a valid email address." in alert.inner_text()
    form.get_by_label("Email").fill("pia@example.com")
    alert.wait_for(state="detached")


def test_every_profile_section_is_in_view_at_phone_size(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given someone's profile on a phone
    them, _ = api_user(stack, new_user, "quin", "Quin Sections")
    me, _ = api_user(stack, new_user, "pia", "Pia Phone")
    phone = person(viewport=PHONE, is_mobile=True, has_touch=True)
    phone.log_in(me["username"])
    phone.page.get_by_role("heading", name="Home").wait_for()
    phone.go(f"u/{them['username']}")
    sections = phone.page.get_by_role("navigation", name="Profile sections")
    sections.get_by_role("link").last.wait_for()
    # then each of its sections' links lies inside the screen (Mutual was off its right edge)
    for link in sections.get_by_role("link").all():
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], link.inner_text()
    assert sections.get_by_role("link", name="Mutual").is_visible()


def test_a_post_the_gateway_throttles_is_sent_again_with_its_key_and_made_once(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Tia signed in, and API Gateway's route throttle on POST /v1/tweets answering her
    # first two tries with its own bare 429 (no Retry-After, not API.md's body)
    tia_user, tia_token = api_user(stack, new_user, "tia", "Tia Throttled")
    tia = person()
    tia.log_in(tia_user["username"])
    tia.page.get_by_role("heading", name="Home").wait_for()
    keys: list[str | None] = []

    def throttle(route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) <= 2:
            route.fulfill(status=429, body='{"message":"Too Many Requests"}',
                          headers={"Access-Control-Allow-Origin": "*",
                                   "Content-Type": "application/json"})  # fmt: skip
        else:
            route.continue_()

    tia.page.route("**/v1/tweets", throttle)

    # when she posts, then the page sends it again by itself, with the same key, and shows it
    text = "Third time lucky."
    tia.page.get_by_label("Tweet text").fill(text)
    tia.page.get_by_role("button", name="Post").click()
    tia.page.locator("article.tweet", has_text=text).wait_for()
    assert len(keys) == 3 and keys[0] and len(set(keys)) == 1
    assert tia.page.get_by_role("alert").count() == 0
    # and the tweet was made once
    with stack.client(tia_token) as client:
        mine = client.get(f"/v1/users/{tia_user['id']}/tweets").json()["items"]
    assert [t["text"] for t in mine] == [text]
    assert tia.errors == []
