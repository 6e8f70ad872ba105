"""Trust and safety in the web client, in a real browser (headless Chromium, as
tests/e2e/test_web_client.py drives it): the Report dialog of a tweet, a message and a profile
(focus, Escape, Tab kept inside, the counter, a repeat, the hour's limit), my reports in
Settings, muted words in Settings, and the moderators' page (the queue, resolve, "Already
resolved", the closed tab). Each new screen is checked by axe-core at desktop (1280x800) and
phone size (390x844) and pictured. Set-up that is not the point goes through the HTTP API.

The suspension routes are another branch's: the page's Suspend buttons are drawn here, their
effect is not tested."""

# ruff: noqa: F811  (the fixtures imported from test_web_client are the tests' parameters)

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import unique_name
from tests.e2e.test_web_client import api_user, browser, person, shots, token_of  # noqa: F401
from tests.support.browser import PHONE, WebUser

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]
DESKTOP = {"width": 1280, "height": 800}
ADMIN = ("warble_admin", "warble-admin-local")  # the local stack's admin (conftest.py)


@pytest.fixture
def moderator_api(stack) -> Iterator[httpx.Client]:
    """The admin over HTTP: another moderator, acting behind the page's back."""
    with stack.client() as anonymous:
        answer = anonymous.post("/v1/auth/login", json={"login": ADMIN[0], "password": ADMIN[1]})
    assert answer.status_code == 200, answer.text
    with stack.client(answer.json()["token"]) as client:
        yield client


def _checked_at_both_sizes(user: WebUser, directory, name: str, phone_picture: bool = True) -> list:
    """axe-core's serious and critical findings at desktop and at phone size (pictured at both:
    `<name>.png` and `phone-<name>.png`; the moderators' phone pictures are test_web_client's
    MODERATOR_SCREENS'), then back to the desktop."""
    findings = [("desktop", f) for f in user.accessibility()]
    user.shot(directory, name)
    user.page.set_viewport_size(PHONE)
    width = user.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (name, width)
    findings += [("phone", f) for f in user.accessibility()]
    if phone_picture:
        user.shot(directory, f"phone-{name}")
    user.page.set_viewport_size(DESKTOP)
    return findings


def _active_inside(page, selector: str) -> bool:
    return page.evaluate(f"document.querySelector('{selector}').contains(document.activeElement)")


def test_report_a_tweet_a_message_and_a_profile_then_my_reports(
    stack,
    new_user,
    person,
    shots,
    moderator_api,
):
    # given a person in the page, and an author who tweeted and wrote to her
    word = uuid.uuid4().hex[:6]
    ana = person(viewport=DESKTOP)
    ana.sign_up(unique_name("ana"))
    author, author_token = api_user(stack, new_user, "rob", "Rob Spammer", "Totally the real Rob")
    with stack.client(token_of(ana)) as mine, stack.client(author_token) as theirs:
        tweet = theirs.post("/v1/tweets", json={"text": f"Buy followers now {word}"}).json()
        own = mine.post("/v1/tweets", json={"text": f"My own tweet {word}"}).json()
        me = mine.get("/v1/users/me").json()
        mine.put(f"/v1/users/me/following/{author['id']}").raise_for_status()  # friends: they
        theirs.put(f"/v1/users/me/following/{me['id']}").raise_for_status()  # may talk
        conversation = mine.post("/v1/conversations", json={"participant_id": author["id"]})
        path = f"/v1/conversations/{conversation.json()['id']}/messages"
        mine.post(path, json={"text": "Hello?"}).raise_for_status()
        theirs.post(path, json={"text": f"Send me your password {word}"}).raise_for_status()
    page = ana.page

    # then she has no Moderation link, and the page says it is for moderators
    assert page.locator('a[data-nav="moderation"]').count() == 0
    ana.go("moderation")
    page.get_by_role("alert").filter(has_text="Only moderators can see this page.").wait_for()

    # when she opens the tweet's Report dialog: focus is inside, Tab stays inside, Escape closes
    ana.go(f"tweet/{tweet['id']}")
    report = page.get_by_role(
        "button", name=f"Report Rob Spammer's tweet: Buy followers now {word}"
    )
    report.click()
    dialog = page.get_by_role("dialog", name="Report Rob Spammer's tweet")
    dialog.wait_for()
    assert _active_inside(page, "dialog.report-dialog")
    for _ in range(8):
        page.keyboard.press("Tab")
        assert _active_inside(page, "dialog.report-dialog")
    for _ in range(8):
        page.keyboard.press("Shift+Tab")
        assert _active_inside(page, "dialog.report-dialog")
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")
    assert page.evaluate("document.activeElement.classList.contains('report')")  # focus back
    # (her own tweet has no Report button)
    ana.go(f"tweet/{own['id']}")
    page.get_by_role("button", name=f"Delete your tweet: My own tweet {word}").wait_for()
    assert page.locator("article.tweet button.report").count() == 0

    # when she reports it: a reason is needed, the comment counts down and stops at 1000
    ana.go(f"tweet/{tweet['id']}")
    report.click()
    dialog.get_by_role("button", name="Report", exact=True).click()
    dialog.get_by_role("alert").filter(has_text="Choose what is wrong.").wait_for()
    dialog.get_by_label("Spam").check()
    comment = dialog.get_by_label("Anything the moderators should know? (optional)")
    comment.fill("é" * 1001)
    assert dialog.get_by_test_id("comment-counter").inner_text() == "1 character too many"
    assert dialog.get_by_role("button", name="Report", exact=True).is_disabled()
    comment.fill("A bot: the same tweet every minute.")
    assert dialog.get_by_test_id("comment-counter").inner_text() == "965 characters left"
    assert _checked_at_both_sizes(ana, shots, "report-dialog") == []
    dialog.get_by_role("button", name="Report", exact=True).click()
    # then she is thanked, and Close (focused) closes
    thanks = page.get_by_role("dialog", name="Thanks, we'll review it")
    thanks.wait_for()
    assert _active_inside(page, "dialog.report-dialog")
    page.keyboard.press("Enter")
    thanks.wait_for(state="detached")
    # and a repeat (a 200: her open report as it was) says the same
    report.click()
    dialog.get_by_label("Abuse or harassment").check()
    dialog.get_by_role("button", name="Report", exact=True).click()
    thanks.wait_for()
    thanks.get_by_role("button", name="Close").click()

    # when she reports the author's message (hers has no Report button) and his profile
    ana.go(f"messages/{conversation.json()['id']}")
    box = page.get_by_test_id("message-box")
    box.locator(".message", has_text=word).wait_for()
    assert box.locator(".message.mine").get_by_role("button", name="Report").count() == 0
    box.get_by_role("button", name=f"Report “Send me your password {word}”").click()
    dialog = page.get_by_role("dialog", name="Report this message")
    dialog.get_by_label("Abuse or harassment").check()
    dialog.get_by_role("button", name="Report", exact=True).click()
    thanks.wait_for()
    thanks.get_by_role("button", name="Close").click()
    ana.go(f"u/{author['username']}")
    page.get_by_role("button", name=f"Report @{author['username']}").click()
    dialog = page.get_by_role("dialog", name=f"Report @{author['username']}'s profile")
    dialog.get_by_label("Impersonation").check()
    dialog.get_by_role("button", name="Report", exact=True).click()
    thanks.wait_for()
    thanks.get_by_role("button", name="Close").click()
    ana.go(f"u/{ana.username}")
    page.get_by_role("button", name="Edit profile").wait_for()
    assert page.get_by_role("button", name=f"Report @{ana.username}").count() == 0

    # then Settings lists her reports, each under review; a dismissed one says so
    with stack.client(token_of(ana)) as mine:
        reports = mine.get("/v1/reports").json()["items"]
    assert [r["target_type"] for r in reports] == ["user", "message", "tweet"]
    case = _open_case(moderator_api, tweet["id"])
    resolved = moderator_api.post(
        f"/v1/admin/cases/{case['id']}/resolve", json={"action": "dismiss"}
    )
    assert resolved.status_code == 200, resolved.text
    ana.go("settings")
    mine_list = page.get_by_test_id("my-reports")
    rows = mine_list.locator("li")
    rows.nth(2).wait_for()
    assert rows.get_by_test_id("report-status").all_inner_texts() == [
        "Under review", "Under review", "No action taken"
    ]  # fmt: skip
    assert rows.nth(0).inner_text().startswith("A profile for impersonation")
    assert rows.nth(2).get_by_role("link", name="A tweet").get_attribute("href") == (
        f"#/tweet/{tweet['id']}"
    )
    mine_list.evaluate("el => el.scrollIntoView({block: 'center'})")
    assert _checked_at_both_sizes(ana, shots, "my-reports") == []

    # when she has made 20 new reports this hour, the next says to try later, in words
    with stack.client(author_token) as theirs, stack.client(token_of(ana)) as mine:
        for i in range(17):
            extra = theirs.post("/v1/tweets", json={"text": f"More spam {i} {word}"}).json()
            made = mine.post(
                "/v1/reports",
                json={"target_type": "tweet", "target_id": extra["id"], "reason": "spam"},
            )
            assert made.status_code == 201, made.text
        last = theirs.post("/v1/tweets", json={"text": f"Still more spam {word}"}).json()
    ana.go(f"tweet/{last['id']}")
    page.get_by_role("button", name=f"Report Rob Spammer's tweet: Still more spam {word}").click()
    dialog = page.get_by_role("dialog", name="Report Rob Spammer's tweet")
    dialog.get_by_label("Spam").check()
    dialog.get_by_role("button", name="Report", exact=True).click()
    alert = dialog.get_by_role("alert")
    alert.filter(has_text="You have sent many reports in the last hour.").wait_for()
    assert "Please try again in" in alert.inner_text() and "429" not in alert.inner_text()


def _open_case(moderator: httpx.Client, target_id: str) -> dict:
    """The open case of a target (other tests' cases share the queue)."""
    cursor = None
    while True:
        params = {"status": "open", "limit": 100, **({"cursor": cursor} if cursor else {})}
        page = moderator.get("/v1/admin/cases", params=params).json()
        for case in page["items"]:
            if case["target_id"] == target_id:
                return case
        cursor = page["next_cursor"]
        assert cursor is not None, f"no open case of {target_id}"


def _card(page, text: str):
    """A case's card, scrolling the queue (infinite scroll) until it is there: other tests'
    cases share the queue."""
    card = page.locator("li.case", has_text=text)
    deadline = time.monotonic() + 30
    while card.count() == 0:
        assert time.monotonic() < deadline, f"no case holding {text!r}"
        page.locator(".sentinel").scroll_into_view_if_needed()
        page.wait_for_timeout(300)
    return card


def test_moderators_resolve_cases_and_a_closed_one_says_already_resolved(
    stack,
    new_user,
    person,
    shots,
    moderator_api,
):
    # given a tweet three people reported, another tweet and a profile reported once
    word = uuid.uuid4().hex[:6]
    author, author_token = api_user(stack, new_user, "sly", "Sly Author", f"Bio of {word}")
    with stack.client(author_token) as theirs:
        loud = theirs.post("/v1/tweets", json={"text": f"Loud offence {word}"}).json()
        quiet = theirs.post("/v1/tweets", json={"text": f"Quiet offence {word}"}).json()
    targets = [
        [
            ("tweet", loud["id"], "spam"),
            ("tweet", quiet["id"], "spam"),
            ("user", author["id"], "impersonation"),
        ],
        [("tweet", loud["id"], "spam")],
        [("tweet", loud["id"], "hate")],
    ]
    for reports in targets:
        with stack.client(new_user("rep")[1]) as reporter:
            for target_type, target_id, reason in reports:
                made = reporter.post(
                    "/v1/reports",
                    json={"target_type": target_type, "target_id": target_id, "reason": reason},
                )
                assert made.status_code == 201, made.text

    # when the admin logs in: the Moderation link, the queue with each case's subject, kind,
    # snapshot, reporter count and reasons
    mod = person(viewport=DESKTOP)
    mod.log_in(*ADMIN)
    page = mod.page
    page.get_by_role("heading", name="Home").wait_for()
    page.locator('a[data-nav="moderation"]').click()
    page.get_by_role("heading", name="Moderation").wait_for()
    card = _card(page, f"Loud offence {word}")
    assert "3 people reported this" in card.inner_text()
    assert card.get_by_role("heading").inner_text() == f"Tweet by Sly Author @{author['username']}"
    assert card.get_by_label("Reasons").locator("li").all_inner_texts() == ["Spam 2", "Hate 1"]
    profile = _card(page, f"Bio of {word}")
    assert profile.get_by_role("heading").inner_text().startswith("Profile by Sly Author")
    assert profile.get_by_role("button", name="Dismiss").is_visible()
    assert profile.get_by_role("button", name="Remove", exact=False).count() == 0  # not a user
    card.scroll_into_view_if_needed()
    assert _checked_at_both_sizes(mod, shots, "moderation", phone_picture=False) == []

    # when he removes the loud tweet with a note: the case leaves the queue, the tweet is gone
    card.get_by_label("Note for the moderators (optional)").fill("Spam wave, removed")
    card.get_by_role("button", name="Remove tweet").click()
    page.get_by_text("Removed: the case is closed.").wait_for()
    card.wait_for(state="detached")
    with stack.client(author_token) as theirs:
        assert theirs.get(f"/v1/tweets/{loud['id']}").status_code == 404

    # when another moderator closes the quiet tweet's case first, his Dismiss says so
    quiet_card = _card(page, f"Quiet offence {word}")
    case = _open_case(moderator_api, quiet["id"])
    closed = moderator_api.post(f"/v1/admin/cases/{case['id']}/resolve", json={"action": "dismiss"})
    assert closed.status_code == 200, closed.text
    quiet_card.get_by_role("button", name="Dismiss").click()
    page.get_by_text("Already resolved: another moderator closed this case.").wait_for()
    quiet_card.wait_for(state="detached")  # the queue was read again

    # then the closed tab shows both, newest first, with what was done and the note
    page.get_by_role("link", name="Closed").click()
    done = page.locator("li.case", has_text=f"Loud offence {word}")
    done.wait_for()
    assert done.get_by_test_id("resolved").inner_text().startswith("Removed")
    assert "“Spam wave, removed”" in done.get_by_test_id("resolved").inner_text()
    assert done.get_by_role("button", name=f"Suspend @{author['username']}").is_visible()
    quiet_done = page.locator("li.case", has_text=f"Quiet offence {word}")
    assert quiet_done.get_by_test_id("resolved").inner_text().startswith("Dismissed")
    assert _checked_at_both_sizes(mod, shots, "moderation-closed", phone_picture=False) == []

    # and on a phone, More holds the Moderation link
    page.set_viewport_size(PHONE)
    mod.go("more")
    page.get_by_role("link", name="Moderation").click()
    page.get_by_role("heading", name="Moderation").wait_for()


def test_muted_words_in_settings(stack, person, shots):
    # given a person in Settings
    eve = person(viewport=DESKTOP)
    eve.sign_up(unique_name("eve"))
    page = eve.page
    eve.go("settings")
    card = page.get_by_test_id("muted-words")
    card.get_by_text("You mute no words.").wait_for()
    field = card.get_by_label("Mute a word or a #hashtag")
    mute = card.get_by_role("button", name="Mute", exact=True)

    # when she mutes a word and a hashtag: both listed, as stored
    for word in ("spoiler", "#Finale"):
        field.fill(word)
        mute.click()
        card.locator(".muted-words li", has_text=word).wait_for()
    assert card.locator(".muted-words .word").all_inner_texts() == ["spoiler", "#Finale"]
    assert card.get_by_test_id("muted-count").inner_text() == "2 of 100 words"
    assert field.input_value() == ""

    # then what the page knows to refuse it says before sending
    field.fill("SPOILER")
    mute.click()
    card.get_by_role("alert").filter(has_text="You already mute “SPOILER”.").wait_for()
    field.fill("x" * 51)
    mute.click()
    card.get_by_role("alert").filter(has_text="at most 50 characters; this one has 51").wait_for()
    # and the server's 400 (a character the browser keeps but the server trims away) in words
    field.fill("\u0085")
    mute.click()
    card.get_by_role("alert").filter(
        has_text="Word 3 was refused: each word is 1 to 50 characters after trimming."
    ).wait_for()
    with stack.client(token_of(eve)) as mine:  # nothing was written
        assert mine.get("/v1/users/me/muted-words").json() == {"words": ["spoiler", "#Finale"]}
    field.fill("")
    card.evaluate("el => el.scrollIntoView({block: 'center'})")
    assert _checked_at_both_sizes(eve, shots, "muted-words") == []

    # when she unmutes one: the list is saved without it, also after a reload
    card.get_by_role("button", name="Unmute spoiler").click()
    card.locator(".muted-words li", has_text="spoiler").wait_for(state="detached")
    page.reload()
    page.get_by_test_id("muted-words").locator(".muted-words li").first.wait_for()
    assert page.get_by_test_id("muted-words").locator(".word").all_inner_texts() == ["#Finale"]
