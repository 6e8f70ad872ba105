"""Media over HTTP against the local runtime, as a client does it: the upload form from the API,
the file posted to the local S3 endpoint (which keeps S3's POST policy), the bucket notification
to MediaFunction, the files from the media CDN, tweets that show them, and their deletion."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from PIL import Image, PngImagePlugin

pytestmark = pytest.mark.e2e

PROCESSED = 30.0  # API.md: ready or failed within 10 s; generous on a busy machine
DELETED = 45.0  # API.md: a deleted tweet's files answer 403/404 within 30 s


def eventually(check: Callable[[], Any], timeout: float) -> Any:
    started = time.monotonic()
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() - started > timeout:
            pytest.fail(f"not settled within {timeout} s")
        time.sleep(0.1)


def photo(width: int = 1200, height: int = 900, orientation: int = 6) -> bytes:
    """A JPEG as phones write them: EXIF with an orientation, the camera and GPS; a comment."""
    image = Image.new("RGB", (width, height), (20, 120, 40))
    image.paste((250, 0, 0), (0, 0, 100, 100))  # the top-left corner, before the rotation
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "HomeCam"
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)}
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes(), comment=b"taken at home", quality=90)
    return out.getvalue()


def png() -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "taken at home")
    out = io.BytesIO()
    Image.new("RGBA", (300, 200), (0, 0, 255, 128)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def start(client: httpx.Client, content_type: str, size: int, alt_text: str = "") -> dict:
    answer = client.post(
        "/v1/media", json={"content_type": content_type, "size": size, "alt_text": alt_text}
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def send(form: dict, data: bytes, content_type: str, **fields: str) -> httpx.Response:
    upload = form["upload"]
    return httpx.post(
        upload["url"],
        data={**upload["fields"], **fields},
        files={"file": ("file", data, content_type)},
        timeout=30,
    )


def settled(client: httpx.Client, media_id: str) -> dict:
    def check() -> dict | None:
        media = client.get(f"/v1/media/{media_id}").json()
        return None if media["status"] == "pending" else media

    return dict(eventually(check, PROCESSED))


def uploaded(client: httpx.Client, data: bytes, content_type: str, alt_text: str = "") -> dict:
    form = start(client, content_type, len(data), alt_text)
    answer = send(form, data, content_type)
    assert 200 <= answer.status_code < 300, answer.text
    return settled(client, form["media"]["id"])


def test_a_photo_is_served_upright_without_its_metadata_from_immutable_urls(pair):
    _, mine, _, _ = pair
    data = photo()
    form = start(mine, "image/jpeg", len(data), "a field")
    assert form["media"]["status"] == "pending" and form["media"]["url"] is None
    assert form["upload"]["fields"]["key"].startswith("uploads/")
    assert send(form, data, "image/jpeg").status_code == 204
    media = settled(mine, form["media"]["id"])
    assert media["status"] == "ready" and (media["width"], media["height"]) == (900, 1200)
    assert media["alt_text"] == "a field" and len(media["blurhash"]) == 28

    served = httpx.get(media["url"])  # no token: a CDN link
    assert served.status_code == 200 and served.headers["content-type"] == "image/jpeg"
    cache = served.headers["cache-control"]
    assert "public" in cache and "immutable" in cache
    assert int(cache.split("max-age=")[1].split(",")[0]) >= 86_400
    image = Image.open(io.BytesIO(served.content))
    assert image.size == (900, 1200) and dict(image.getexif()) == {}
    assert b"HomeCam" not in served.content and b"taken at home" not in served.content
    red, green, _ = image.convert("RGB").getpixel((850, 50))  # the corner turned to the right
    assert red > 200 and green < 80

    preview = httpx.get(media["preview_url"])
    assert preview.status_code == 200 and "immutable" in preview.headers["cache-control"]
    assert max(Image.open(io.BytesIO(preview.content)).size) == 640


def test_the_store_refuses_what_the_form_does_not_allow_and_keeps_nothing(pair, stack):
    _, mine, _, _ = pair
    data = png()
    too_big = start(mine, "image/png", len(data) - 1)
    answer = send(too_big, data, "image/png")
    assert answer.status_code == 400 and b"EntityTooLarge" in answer.content
    other_type = start(mine, "image/png", len(data))
    answer = send(other_type, data, "image/jpeg", **{"Content-Type": "image/jpeg"})
    assert answer.status_code == 403
    key = too_big["upload"]["fields"]["key"]
    bucket = too_big["upload"]["url"].rstrip("/").rsplit("/", 1)[1]
    # Nothing was kept: the processing never ran, and the bucket is private to an anonymous GET.
    time.sleep(1.0)
    assert mine.get(f"/v1/media/{too_big['media']['id']}").json()["status"] == "pending"
    assert httpx.get(f"{stack.s3}/{bucket}/{key}").status_code == 403


@pytest.mark.parametrize("kind", ["jpeg_as_png", "text", "bomb"])
def test_an_upload_that_is_not_a_safe_image_of_its_type_fails_and_says_why(pair, kind: str):
    _, mine, _, _ = pair
    if kind == "jpeg_as_png":
        data, declared, code = photo(64, 48), "image/png", "unsupported_image"
    elif kind == "text":
        data, declared, code = (
            b"this is a text file, not a picture",
            "image/gif",
            "unsupported_image",
        )
    else:
        out = io.BytesIO()
        Image.new("1", (20_000, 20_000)).save(out, "PNG")  # 400 megapixels in ~50 KB
        data, declared, code = out.getvalue(), "image/png", "image_too_large"
    media = uploaded(mine, data, declared)
    assert media["status"] == "failed" and media["error"]["code"] == code
    assert media["error"]["message"] and media["url"] is None


def test_a_tweet_shows_its_media_everywhere_and_takes_them_when_deleted(pair):
    me, mine, _, theirs = pair
    assert theirs.put(f"/v1/users/me/following/{me['id']}").status_code == 200
    first = uploaded(mine, photo(64, 48, orientation=1), "image/jpeg", "one")
    second = uploaded(mine, png(), "image/png", "two")
    answer = mine.post("/v1/tweets", json={"text": "", "media_ids": [second["id"], first["id"]]})
    assert answer.status_code == 201, answer.text
    tweet = answer.json()
    assert tweet["text"] == "" and tweet["media_ids"] == [second["id"], first["id"]]
    assert [(m["id"], m["alt_text"]) for m in tweet["media"]] == [
        (second["id"], "two"),
        (first["id"], "one"),
    ]
    assert theirs.get(f"/v1/media/{first['id']}").status_code == 200  # a tweet shows it

    patched = mine.patch(f"/v1/media/{first['id']}", json={"alt_text": "one, described"})
    assert patched.status_code == 200 and patched.json()["alt_text"] == "one, described"
    assert theirs.patch(f"/v1/media/{first['id']}", json={"alt_text": "x"}).status_code == 404

    def shown(page: dict) -> list[str]:
        return [m["alt_text"] for t in page["items"] if t["id"] == tweet["id"] for m in t["media"]]

    now = ["two", "one, described"]
    single = theirs.get(f"/v1/tweets/{tweet['id']}").json()
    assert [m["alt_text"] for m in single["media"]] == now
    assert shown(mine.get(f"/v1/users/{me['id']}/tweets").json()) == now
    eventually(lambda: shown(theirs.get("/v1/timeline/home").json()) == now, 10)
    retweet = theirs.post(f"/v1/tweets/{tweet['id']}/retweet").json()
    assert len(retweet["retweet_of"]["media"]) == 2

    # Used once: no other tweet may show them.
    again = mine.post("/v1/tweets", json={"text": "again", "media_ids": [first["id"]]})
    assert again.status_code == 400 and again.json()["error"]["code"] == "invalid_media"
    assert first["id"] in [d.get("id") for d in again.json()["error"]["details"]]

    assert mine.delete(f"/v1/tweets/{tweet['id']}").status_code == 204
    for media in (first, second):
        eventually(lambda m=media: httpx.get(m["url"]).status_code in (403, 404), DELETED)
        assert httpx.get(media["preview_url"]).status_code in (403, 404)


def test_media_that_are_not_mine_or_not_ready_are_refused_and_nothing_is_written(pair):
    me, mine, _, theirs = pair
    theirs_ready = uploaded(theirs, png(), "image/png")
    pending = start(mine, "image/png", 100)["media"]["id"]
    assert mine.get(f"/v1/media/{theirs_ready['id']}").status_code == 404  # on no tweet
    before = mine.get(f"/v1/users/{me['id']}/tweets").json()["items"]
    answer = mine.post(
        "/v1/tweets", json={"text": "hi", "media_ids": [theirs_ready["id"], pending, "12345"]}
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_media"
    refused = {d["id"] for d in answer.json()["error"]["details"]}
    assert refused == {theirs_ready["id"], pending, "12345"}
    assert mine.get(f"/v1/users/{me['id']}/tweets").json()["items"] == before


def test_of_two_tweets_racing_for_the_same_media_exactly_one_gets_it(pair):
    me, mine, _, _ = pair
    media = uploaded(mine, png(), "image/png")

    def post(text: str) -> int:
        return mine.post("/v1/tweets", json={"text": text, "media_ids": [media["id"]]}).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = sorted(pool.map(post, ["a", "b", "c", "d"]))
    assert statuses == [201, 400, 400, 400]
    shown = [t for t in mine.get(f"/v1/users/{me['id']}/tweets").json()["items"] if t["media"]]
    assert len(shown) == 1


def test_the_local_s3_checks_every_signature_and_its_cdn_serves_media_only(stack, new_user):
    """Issue 47 item 7 (local runtime): a request that only looked signed listed every key and
    wrote text/html; the CDN served any key, and answered GET / with a 500."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError

    _, token = new_user("s3")
    with stack.client(token) as me:
        upload = start(me, "image/png", 100)["upload"]
    bucket = upload["url"].rstrip("/").rsplit("/", 1)[1]

    def s3(secret: str):
        return boto3.client("s3", endpoint_url=stack.s3, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key=secret,
                            config=Config(signature_version="s3v4",
                                          s3={"addressing_style": "path"}))  # fmt: skip

    looks_signed = {
        "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/"
        "aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
        "X-Amz-Date": "20260101T000000Z",
    }
    # a request that only looks signed, or carries no signature, is refused: no list, no write
    for headers in (looks_signed, {}):
        assert httpx.get(f"{stack.s3}/{bucket}", headers=headers).status_code == 403
        page = {**headers, "Content-Type": "text/html"}
        put = httpx.put(f"{stack.s3}/{bucket}/media/x.html", content=b"<script>", headers=page)
        assert put.status_code == 403
    with pytest.raises(ClientError) as wrong:
        s3("not-the-secret").list_objects_v2(Bucket=bucket)
    assert wrong.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    # while a request signed with the local credentials (every function's) is served
    signed = s3("testing")
    with pytest.raises(ClientError):
        signed.head_object(Bucket=bucket, Key="media/x.html")  # nothing was written
    signed.put_object(Bucket=bucket, Key="media/probe/a.txt", Body=b"hi", ContentType="text/plain")
    signed.put_object(Bucket=bucket, Key="uploads/probe", Body=b"raw", ContentType="text/plain")
    keys = [o["Key"] for o in signed.list_objects_v2(Bucket=bucket)["Contents"]]
    assert "media/probe/a.txt" in keys
    # and a presigned URL, as S3 signs it, untouched only
    url = signed.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "media/probe/a.txt"}, ExpiresIn=60
    )
    assert httpx.get(url).content == b"hi"
    assert httpx.get(url.replace("a.txt", "b.txt")).status_code == 403
    # (SigV2, which S3 takes for no bucket made since 2020, is no signature here either)
    v2 = boto3.client(
        "s3",
        endpoint_url=stack.s3,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(signature_version="s3", s3={"addressing_style": "path"}),
    )
    v2_url = v2.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "media/probe/a.txt"}, ExpiresIn=60
    )  # fmt: skip
    assert httpx.get(v2_url).status_code == 403

    # the CDN serves media/* only (the bucket policy's grant), and / is a 404
    assert httpx.get(f"{stack.media}/media/probe/a.txt").content == b"hi"
    assert httpx.get(f"{stack.media}/uploads/probe").status_code == 403
    assert httpx.get(f"{stack.media}/").status_code == 404
