"""Images in the web client, in headless Chromium against the local runtime: attaching through
the file picker, the upload's progress and processing, a failed image saying why, alt text, the
thumbnail in the timeline (from the media CDN) and the full-size view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.e2e.conftest import unique_name
from tests.support.browser import WebUser, chromium, screenshot_dir

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def person(browser, stack, tmp_path) -> Iterator[WebUser]:
    # The page may also reach the S3 endpoint (uploads) and the media CDN (the images), and show
    # the files it is about to send (blob: URLs).
    user = WebUser(browser, stack.web, (stack.http, stack.ws, stack.s3, stack.media))
    user.allowed = (*user.allowed, "blob:")
    yield user
    user.shot(tmp_path, "last")
    user.close()


def _photo(path: Path) -> Path:
    image = Image.new("RGB", (1600, 1000), (34, 139, 34))
    image.paste((135, 206, 235), (0, 0, 1600, 420))  # sky over a field
    exif = Image.Exif()
    exif[0x0112] = 1
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0)}
    image.save(path, "JPEG", exif=exif.tobytes(), quality=85)
    return path


def test_attach_images_with_alt_text_see_why_one_failed_and_view_full_size(
    person: WebUser, tmp_path: Path
) -> None:
    person.sign_up(unique_name("pics"))
    page = person.page
    photo = _photo(tmp_path / "field.jpg")
    broken = tmp_path / "notes.png"
    broken.write_bytes(b"these are notes, not a picture")

    page.get_by_label("Add images").set_input_files([str(photo), str(broken)])
    tray = page.get_by_role("list", name="Attached images")
    tray.locator('li[data-state="ready"]').wait_for(timeout=40_000)
    failed = tray.locator('li[data-state="failed"]')
    failed.wait_for(timeout=40_000)
    assert "not a JPEG, PNG, GIF or WebP" in failed.get_by_role("alert").inner_text()
    post = page.get_by_role("button", name="Post")
    assert post.is_disabled()  # a failed image holds the tweet back until it is removed
    failed.get_by_role("button", name="Remove image").click()

    tray.get_by_label("Image description").fill("Blue sky over a green field")
    page.get_by_label("Tweet text").fill("Out in the fields today")
    post.click()
    tweet = page.locator("article.tweet", has_text="Out in the fields today")
    thumb = tweet.get_by_role("img", name="Blue sky over a green field")
    thumb.wait_for()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle()
    )
    assert thumb.get_attribute("src").endswith(".preview.webp")
    assert page.get_by_role("list", name="Attached images").count() == 0  # the box is empty again

    tweet.get_by_role("button", name="View image: Blue sky over a green field").click()
    full = page.locator("dialog.full-size img")
    full.wait_for()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 1600", arg=full.element_handle()
    )
    person.shot(screenshot_dir(tmp_path), "media-full-size")
    assert person.accessibility() == [], "media-full-size"
    page.keyboard.press("Escape")
    page.locator("dialog.full-size").wait_for(state="detached")
    person.shot(screenshot_dir(tmp_path), "media-timeline")
    assert person.accessibility() == [], "media-timeline"


def test_a_fifth_image_is_said_to_be_left_out(person: WebUser, tmp_path: Path) -> None:
    # given five small pictures picked at once (a tweet holds four)
    person.sign_up(unique_name("five"))
    page = person.page
    files = []
    for i in range(5):
        path = tmp_path / f"dot{i}.png"
        Image.new("RGB", (40, 40), (40 * i, 90, 160)).save(path, "PNG")
        files.append(str(path))
    page.get_by_label("Add images").set_input_files(files)
    # then four are attached and the page says one was left out (it was dropped silently)
    tray = page.get_by_role("list", name="Attached images")
    tray.locator("li").nth(3).wait_for()
    assert tray.locator("li").count() == 4
    left_out = page.get_by_test_id("left-out")
    assert left_out.inner_text() == "A tweet holds up to 4 images: 1 was left out."
    # and removing one takes the note away
    tray.get_by_role("button", name="Remove image").first.click()
    left_out.wait_for(state="detached")
