"""Discover in a real browser (headless Chromium, as tests/e2e/test_web_client.py drives it):
the deck keeps the people it was shown until they are swiped (issue 47, item 11), and the arrow
keys swipe only the card that has focus, under a match screen that is a real modal dialog
(item 12). Set-up (the others' locations, a swipe waiting for a match) goes through the HTTP
API; what is tested goes through the page."""

from __future__ import annotations

import random

import pytest

from tests.e2e.test_web_client import api_user, browser, person, shots  # noqa: F401  fixtures

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]
KM = 1 / 111.195  # a kilometre of latitude, in degrees


def _placed(stack, new_user, prefix: str, name: str, lat: float, lon: float) -> tuple[dict, str]:
    user, token = api_user(stack, new_user, prefix, name, "Out for a walk.")
    with stack.client(token) as client:
        client.put("/v1/users/me/location", json={"lat": lat, "lon": lon}).raise_for_status()
    return user, token


def _set_location(viewer, lat: float, lon: float) -> None:
    viewer.page.get_by_role("heading", name="Home").wait_for()
    viewer.go("discover")
    viewer.page.get_by_label("Latitude").fill(f"{lat:.6f}")
    viewer.page.get_by_label("Longitude").fill(f"{lon:.6f}")
    viewer.page.get_by_role("button", name="Set location").click()


def test_cards_shown_but_not_swiped_stay_through_refresh_radius_leaving_and_reload(
    stack,
    new_user,
    person,  # noqa: F811
    shots,  # noqa: F811
) -> None:
    # given two people 3 and 5 km from a spot of this test's own
    lat, lon = random.uniform(-60, 60), random.uniform(-179, 179)
    near, _ = _placed(stack, new_user, "near", "Nora Near", lat + 3 * KM, lon)
    far, _ = _placed(stack, new_user, "far", "Farid Far", lat + 5 * KM, lon)
    viewer_user, _ = api_user(stack, new_user, "view", "Vera Viewer")
    viewer = person()
    viewer.log_in(viewer_user["username"])
    cards = viewer.page.locator(".swipe-card")

    # when she sets her location there, the deck shows one of them (Discover hands both out)
    _set_location(viewer, lat, lon)
    cards.first.wait_for()

    # then neither is lost: not by Refresh (the server shows nobody twice), a radius that
    # leaves them out and one that takes them in again, leaving Discover, or a reload
    viewer.page.get_by_role("button", name="Refresh").click()
    viewer.page.wait_for_timeout(500)  # the page's answer, if it were to empty the deck
    cards.first.wait_for()
    viewer.page.get_by_label("Radius").select_option("1")
    viewer.page.get_by_text("Nobody new nearby").wait_for()
    viewer.page.get_by_label("Radius").select_option("50")
    cards.first.wait_for()
    viewer.go("home")
    viewer.page.get_by_role("heading", name="Home").wait_for()
    viewer.go("discover")
    cards.first.wait_for()
    viewer.page.reload()
    cards.first.wait_for()
    viewer.page.get_by_role("button", name="Refresh").click()
    viewer.page.wait_for_timeout(500)
    viewer.shot(shots, "discover-after-refresh")
    assert viewer.accessibility() == []

    # and each comes once, until swiped
    seen = []
    for _ in range(2):
        card = cards.first
        card.wait_for()
        seen.append(card.get_attribute("data-user"))
        # (its answer awaited: a swipe the page did not see answered comes back to the deck)
        with viewer.page.expect_response(lambda r: r.url.endswith("/v1/discover/swipes")):
            card.get_by_role("button", name="Swipe left").click()
        viewer.page.locator(f'.swipe-card[data-user="{seen[-1]}"]').wait_for(state="detached")
    assert sorted(seen) == sorted([near["username"], far["username"]])
    viewer.page.get_by_text("Nobody new nearby").wait_for()
    viewer.page.reload()
    viewer.page.get_by_text("Nobody new nearby").wait_for()
    assert viewer.errors == []


def test_arrow_keys_swipe_only_the_focused_card_and_the_match_is_a_modal_dialog(
    stack,
    new_user,
    person,  # noqa: F811
    shots,  # noqa: F811
) -> None:
    # given someone 1.5 km away who already liked her, and someone else 5 km away
    lat, lon = random.uniform(-60, 60), random.uniform(-179, 179)
    viewer_user, _ = api_user(stack, new_user, "kay", "Kay Keys")
    liker, liker_token = _placed(stack, new_user, "liker", "Lee Liker", lat + 1.5 * KM, lon)
    other, _ = _placed(stack, new_user, "other", "Otto Other", lat + 5 * KM, lon)
    with stack.client(liker_token) as client:
        swiped = client.post(
            "/v1/discover/swipes", json={"user_id": viewer_user["id"], "direction": "right"}
        )
        assert swiped.json() == {"matched": False, "conversation_id": None}
    viewer = person()
    viewer.log_in(viewer_user["username"])
    page = viewer.page
    _set_location(viewer, lat, lon)
    top = page.locator(f'.swipe-card[data-user="{liker["username"]}"]')
    top.wait_for()
    dialog = page.get_by_role("dialog", name="It's a match")

    # when she works the radius menu with the arrow keys
    page.get_by_label("Radius").focus()
    for key in ("ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"):
        page.keyboard.press(key)
    page.wait_for_timeout(1_000)
    # then nothing is swiped: no match, the card is still there
    assert dialog.count() == 0
    top.wait_for()
    _, token = viewer.username, page.evaluate("localStorage.getItem('warble.token')")
    with stack.client(token) as client:
        assert client.get("/v1/discover/matches").json()["items"] == []

    # when the card has focus, the right arrow likes it: the match is a modal <dialog> with the
    # focus inside it
    top.focus()
    page.keyboard.press("ArrowRight")
    dialog.wait_for()
    assert page.evaluate("document.querySelector('dialog.match').matches(':modal')")
    inside = "document.querySelector('dialog.match').contains(document.activeElement)"
    assert page.evaluate(inside)
    viewer.shot(shots, "match-dialog")
    assert viewer.accessibility() == []
    # Tab and Shift+Tab stay inside it; the arrows under it swipe nothing
    for key in ("Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab"):
        page.keyboard.press(key)
        assert page.evaluate(inside), key
    next_card = page.locator(f'.swipe-card[data-user="{other["username"]}"]')
    next_card.wait_for()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowRight")
    # Escape closes it; the next card was not swiped
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")
    page.wait_for_timeout(500)
    assert next_card.is_visible()
    assert viewer.errors == []
