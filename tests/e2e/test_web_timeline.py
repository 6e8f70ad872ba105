"""The timeline's smaller things people met in the web client (issue 47, item 15), in a real
browser (headless Chromium, as tests/e2e/test_web_client.py drives it): one tweet shown once
however many times a timeline holds it, a reply naming whom it answers, a GIF labelled and at
most its own size, a Back on phone-size Settings, and no "new post" that is not new."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.e2e.test_media_http import uploaded
from tests.e2e.test_tweets_http import eventually, home_ids
from tests.e2e.test_web_client import api_user, browser, person  # noqa: F401  fixtures
from tests.support.browser import PHONE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]


def follow(stack, token: str, *users: dict) -> None:
    with stack.client(token) as client:
        for user in users:
            client.put(f"/v1/users/me/following/{user['id']}").raise_for_status()


def test_a_tweet_and_a_friends_retweet_of_it_show_once_under_who_retweeted(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Amy following Tess and Bo; Tess tweets, then Bo retweets it
    amy, amy_token = api_user(stack, new_user, "amy", "Amy Reader")
    tess, tess_token = api_user(stack, new_user, "tess", "Tess Tweeter")
    bo, bo_token = api_user(stack, new_user, "bo", "Bo Retweeter")
    follow(stack, amy_token, tess, bo)
    with stack.client(tess_token) as client:
        tweet = client.post("/v1/tweets", json={"text": "The swifts are back."}).json()
    with stack.client(bo_token) as client:
        retweet = client.post(f"/v1/tweets/{tweet['id']}/retweet")
        assert retweet.status_code in (200, 201), retweet.text
    with stack.client(amy_token) as client:
        eventually(lambda: len(home_ids(client)) >= 2)  # her timeline holds both entries

    # when Amy opens Home
    page = person()
    page.log_in(amy["username"])
    page.page.get_by_role("heading", name="Home").wait_for()
    shown = page.page.locator(f"article.tweet[data-tweet-id='{tweet['id']}']")
    shown.first.wait_for()
    page.page.wait_for_timeout(300)

    # then the tweet is there once, at the retweet's place, saying who retweeted it
    assert shown.count() == 1
    assert "Bo Retweeter retweeted" in shown.inner_text()
    assert page.errors == []


def test_a_reply_names_the_author_it_answers(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Amy following Bo only; Bo replies to a tweet of Tess's (whom Amy does not follow)
    amy, amy_token = api_user(stack, new_user, "amy", "Amy Reader")
    tess, tess_token = api_user(stack, new_user, "tess", "Tess Tweeter")
    bo, bo_token = api_user(stack, new_user, "bo", "Bo Replier")
    follow(stack, amy_token, bo)
    with stack.client(tess_token) as client:
        parent = client.post("/v1/tweets", json={"text": "Which bird sings first?"}).json()
    with stack.client(bo_token) as client:
        client.post("/v1/tweets", json={"text": "The robin.", "reply_to": parent["id"]})
    with stack.client(amy_token) as client:
        eventually(lambda: len(home_ids(client)) >= 1)

    # when Amy opens Home, then Bo's reply says whom it answers
    page = person()
    page.log_in(amy["username"])
    reply = page.page.locator("article.tweet", has_text="The robin.")
    reply.locator(".reply-to").filter(has_text=f"Replying to @{tess['username']}").wait_for()
    # and so do the replies under Tess's tweet on its own page
    page.go(f"tweet/{parent['id']}")
    page.page.locator(".tweets article.tweet", has_text="The robin.").locator(".reply-to").filter(
        has_text=f"Replying to @{tess['username']}"
    ).wait_for()
    assert page.errors == []


def gif(width: int, height: int, frames: int = 3) -> bytes:
    shots = [Image.new("P", (width, height), colour) for colour in range(1, frames + 1)]
    out = io.BytesIO()
    shots[0].save(out, "GIF", save_all=True, append_images=shots[1:], duration=100, loop=0)
    return out.getvalue()


def test_a_gif_is_labelled_animated_and_never_drawn_past_its_own_size(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given a tweet of Tess's holding a small animated GIF (60 x 40)
    tess, tess_token = api_user(stack, new_user, "tess", "Tess Tweeter")
    with stack.client(tess_token) as client:
        media = uploaded(client, gif(60, 40), "image/gif", "A blinking dot")
        assert media["status"] == "ready", media
        client.post("/v1/tweets", json={"text": "Blink.", "media_ids": [media["id"]]})

    # when someone opens her profile on a wide screen
    page = person()
    page.allowed = (*page.allowed, stack.media.rstrip("/") + "/")  # (the images' CDN)
    viewer, _ = api_user(stack, new_user, "vi", "Vi Viewer")
    page.log_in(viewer["username"])
    page.page.get_by_role("heading", name="Home").wait_for()
    page.go(f"u/{tess['username']}")
    thumb = page.page.get_by_role("button", name="View GIF: A blinking dot")
    thumb.wait_for()
    image = thumb.locator("img")
    image.evaluate("img => img.complete || new Promise(r => img.onload = r)")

    # then it says GIF, plays from its original (the preview is a still), at most its own size
    assert thumb.get_by_text("GIF", exact=True).is_visible()
    assert image.get_attribute("src") == media["url"]
    drawn = image.bounding_box()
    assert drawn["width"] <= 60 and drawn["height"] <= 40, drawn
    assert page.errors == []


def test_phone_size_settings_has_a_back_button(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Pia on a phone, in Settings through More
    me, _ = api_user(stack, new_user, "pia", "Pia Phone")
    phone = person(viewport=PHONE, is_mobile=True, has_touch=True)
    phone.log_in(me["username"])
    phone.page.get_by_role("heading", name="Home").wait_for()
    phone.go("more")
    phone.page.get_by_role("link", name="Settings").click()
    phone.page.get_by_role("heading", name="Settings").wait_for()

    # when she taps Back, then she is where she came from
    phone.page.get_by_role("button", name="Back").click()
    phone.page.get_by_role("heading", name="Settings").wait_for(state="detached")
    assert phone.page.url.endswith("#/more")
    assert phone.errors == []


def test_no_new_post_is_announced_from_counts_read_before_home_was_marked_read(
    stack,
    new_user,
    person,  # noqa: F811
) -> None:
    # given Amy following Tess, who tweeted since Amy last read Home (her home count is 1)
    amy, amy_token = api_user(stack, new_user, "amy", "Amy Reader")
    tess, tess_token = api_user(stack, new_user, "tess", "Tess Tweeter")
    follow(stack, amy_token, tess)
    with stack.client(tess_token) as client:
        client.post("/v1/tweets", json={"text": "Already on your timeline."}).raise_for_status()
    with stack.client(amy_token) as client:

        def counted() -> dict:
            return client.get("/v1/notifications/unread-counts").json()

        eventually(lambda: counted()["home"] == 1)
        stale = counted()

    # and the counts the page asks for as it signs in answer late, after Home was marked read
    # (a slow network): they were counted before the mark
    page = person()
    held: list = []

    def late(route) -> None:
        if held or route.request.method != "GET":
            route.continue_()
        else:
            held.append(route)

    page.page.route("**/v1/notifications/unread-counts", late)
    with page.page.expect_response(
        lambda r: r.url.endswith("/v1/notifications/read") and r.request.method == "POST"
    ):
        page.log_in(amy["username"])
    page.page.locator("article.tweet", has_text="Already on your timeline.").wait_for()
    page.page.wait_for_timeout(500)  # the read that follows the mark has come back

    # when the late answer comes
    held[0].fulfill(status=200, json=stale, headers={"Access-Control-Allow-Origin": "*"})
    page.page.wait_for_timeout(700)

    # then nothing is announced as new: the only post is on the timeline already
    assert page.page.locator("button.new-posts").count() == 0
    assert page.errors == []
