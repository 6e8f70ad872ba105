"""MediaService's rules on in-memory stores and the real image processing: the upload form,
processing an upload into a ready or failed Media, attaching media to tweets (each on one tweet
at most), alt text that the tweets follow, and what a tweet's deletion takes with it."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image
from warble.domain.tweets.ports import StoredTweet
from warble.errors import InvalidMedia, NotFound, ValidationFailed
from warble.events import TweetDeleted, TweetPosted
from warble.http.render import render

from tests.unit.fakes import World

pytestmark = pytest.mark.unit


def _jpeg(width: int = 64, height: int = 48, orientation: int = 1) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)}  # GPS
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(
        out, "JPEG", exif=exif.tobytes(), comment=b"taken at home"
    )
    return out.getvalue()


def _uploaded(world: World, owner: int, data: bytes, content_type: str = "image/jpeg") -> str:
    upload = world.media.create(owner, content_type, len(data), "")
    key = upload.upload.fields["key"]
    world.bucket.put(key, data, content_type)
    world.media.uploaded(key)
    return upload.media.id


def test_an_upload_form_pins_the_key_and_the_media_starts_pending(world: World):
    alice = world.user()
    upload = world.media.create(alice, "image/png", 1234, "a cat")
    assert upload.media.status == "pending" and upload.media.size == 1234
    assert (upload.media.url, upload.media.width, upload.media.blurhash) == (None, None, None)
    assert upload.upload.fields["key"] == f"uploads/{upload.media.id}"
    assert world.media.get(alice, int(upload.media.id)) == upload.media


@pytest.mark.parametrize(
    ("content_type", "size", "alt_text"),
    [("image/bmp", 10, ""), ("image/png", 0, ""), ("image/png", 5 * 1024 * 1024 + 1, ""),
     ("image/png", 10, "x" * 1501)],
)  # fmt: skip
def test_a_bad_declaration_is_refused_and_nothing_written(
    world: World, content_type: str, size: int, alt_text: str
):
    with pytest.raises(ValidationFailed):
        world.media.create(world.user(), content_type, size, alt_text)
    assert world.media_store.items == {}


def test_an_upload_becomes_ready_upright_and_without_its_metadata(world: World):
    alice = world.user()
    media_id = _uploaded(world, alice, _jpeg(64, 48, orientation=6))
    media = world.media.get(alice, int(media_id))
    assert media.status == "ready" and (media.width, media.height) == (48, 64)
    assert media.url and media.url.startswith("https://cdn.example/media/")
    served = world.bucket.files[media.url.removeprefix("https://cdn.example/")][0]
    image = Image.open(io.BytesIO(served))
    assert image.size == (48, 64) and dict(image.getexif()) == {}
    assert "comment" not in image.info and b"taken at home" not in served
    assert media.blurhash and len(media.blurhash) == 28
    assert not any(key.startswith("uploads/") for key in world.bucket.files)  # read once


@pytest.mark.parametrize(
    ("data", "declared", "code"),
    [(b"%PDF-1.4 not an image", "image/png", "unsupported_image"),
     (None, "image/png", "unsupported_image"),  # a JPEG declared as a PNG
     ("bomb", "image/png", "image_too_large")],
)  # fmt: skip
def test_an_upload_that_is_not_a_safe_image_of_its_type_fails_with_a_reason(
    world: World, data: bytes | str | None, declared: str, code: str
):
    if data is None:
        data = _jpeg()
    elif data == "bomb":  # 20,000 px square, a few KB compressed
        out = io.BytesIO()
        Image.new("1", (20_000, 20_000)).save(out, "PNG")
        data = out.getvalue()
    assert isinstance(data, bytes)
    alice = world.user()
    media = world.media.get(alice, int(_uploaded(world, alice, data, declared)))
    assert media.status == "failed" and media.error is not None and media.error.code == code
    assert media.url is None and world.bucket.files == {}


def test_a_second_delivery_of_the_same_upload_changes_nothing(world: World):
    alice = world.user()
    upload = world.media.create(alice, "image/jpeg", 10_000, "")
    key = upload.upload.fields["key"]
    world.bucket.put(key, _jpeg(), "image/jpeg")
    assert world.media.uploaded(key) == "ready"
    before = world.media_store.items[int(upload.media.id)]
    world.bucket.put(key, b"garbage", "image/jpeg")
    assert world.media.uploaded(key) == "ignored"
    assert world.media_store.items[int(upload.media.id)] == before


def test_a_tweet_refuses_media_that_are_not_the_authors_own_ready_free_media(world: World):
    alice, bob = world.user(), world.user()
    mine = world.ready_media(alice)
    theirs = world.ready_media(bob)
    pending = world.media.create(alice, "image/png", 10, "").media.id
    used = world.ready_media(alice)
    world.tweets.post(alice, "first", None, [used])
    with pytest.raises(InvalidMedia) as refused:
        world.tweets.post(alice, "x", None, [mine, theirs, pending, used, "999", "abc"])
    assert set(refused.value.refused) == {theirs, pending, used, "999", "abc"}
    assert len(world.tweet_store.tweets) == 1  # nothing written
    assert world.media_store.items[int(mine)].tweet_id is None


def test_of_two_tweets_racing_for_one_media_only_one_gets_it(world: World):
    alice = world.user()
    photo = world.ready_media(alice)
    # Both read the media free; the first transaction claims it, then the second's claim fails
    # and its second read refuses the media.
    attached = tuple(world.media.attachable(alice, [photo]))
    world.tweets.post(alice, "winner", None, [photo])
    loser = StoredTweet(id=world.ids.next_id(), author_id=alice, text="loser", created_at_ms=1,
                        media_ids=(photo,), media=attached)  # fmt: skip
    with pytest.raises(InvalidMedia) as refused:
        world.tweets._create_with_media(loser, [photo])  # after a stale read
    assert refused.value.refused == [photo]
    assert [t.text for t in world.tweet_store.tweets.values()] == ["winner"]


def test_a_tweet_with_media_may_have_no_text_but_one_without_may_not(world: World):
    alice = world.user()
    tweet = world.tweets.post(alice, "  ", None, [world.ready_media(alice)])
    assert tweet.text == "" and len(tweet.media) == 1
    with pytest.raises(ValidationFailed):
        world.tweets.post(alice, "  ", None, [])


def test_alt_text_changed_after_posting_shows_on_the_tweet(world: World):
    alice, bob = world.user(), world.user()
    photo = world.ready_media(alice, "before")
    tweet = world.tweets.post(alice, "look", None, [photo])
    world.media.set_alt_text(alice, int(photo), "after")
    shown = json.loads(render(world.tweets.get(bob, int(tweet.id))))["media"]
    assert [m["alt_text"] for m in shown] == ["after"]
    assert world.media.get(bob, int(photo)).alt_text == "after"  # shown by a tweet: visible
    with pytest.raises(NotFound):
        world.media.set_alt_text(bob, int(photo), "mine now")


def test_another_users_unattached_media_is_not_found(world: World):
    alice, bob = world.user(), world.user()
    photo = world.ready_media(alice)
    with pytest.raises(NotFound):
        world.media.get(bob, int(photo))


def test_shown_media_are_kept_and_a_deleted_tweets_media_go_with_it(world: World):
    alice = world.user()
    world.bucket.put("media/1/t.png", b"x", "image/png")
    world.bucket.put("media/1/t.preview.webp", b"x", "image/webp")
    keys = ("media/1/t.png", "media/1/t.preview.webp")
    world.media.attached(
        [TweetPosted(tweet_id=5, author_id=alice, media_ids=(1,), media_keys=keys)]
    )
    assert world.bucket.kept == set(keys)
    world.media.forget([TweetDeleted(tweet_id=5, author_id=alice, media_ids=(1,), media_keys=keys)])
    assert world.bucket.files == {} and 1 not in world.media_store.items
