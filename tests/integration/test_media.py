"""Media on real stores (moto's DynamoDB and S3, Redis, PostgreSQL): the sample S3 event through
the MediaFunction's handler, and the tweet transaction's claim on a media, raced."""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest
from PIL import Image
from warble import clock, services
from warble.dal.media import MediaTable
from warble.domain.media.ports import StoredMedia
from warble.errors import InvalidMedia

from tests.integration.test_sample_events import Context, _event, _load_function

pytestmark = pytest.mark.integration

SAMPLE_ID = 382808519700000009  # the media id in events/media/upload-created.json


def _s3():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


def _jpeg() -> bytes:
    exif = Image.Exif()
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0)}
    out = io.BytesIO()
    Image.new("RGB", (900, 700), (200, 100, 0)).save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


@pytest.fixture
def owner(accounts) -> int:
    return int(accounts.signup("alice", "alice@example.com", "password1", None, "").user["id"])


def test_the_sample_upload_event_makes_the_media_ready_with_its_files_tagged(owner):
    data = _jpeg()
    MediaTable().create(
        StoredMedia(id=SAMPLE_ID, owner_id=owner, content_type="image/jpeg", size=len(data),
                    alt_text="", created_at_ms=clock.epoch_ms(), token="tok")
    )  # fmt: skip
    bucket = os.environ["MEDIA_BUCKET"]
    _s3().put_object(Bucket=bucket, Key=f"uploads/{SAMPLE_ID}", Body=data, ContentType="image/jpeg")
    event = _event("media/upload-created.json")
    event["Records"][0]["s3"]["bucket"]["name"] = bucket

    answer = _load_function("media").handler(event, Context())

    assert answer == {"media": {f"uploads/{SAMPLE_ID}": "ready"}}
    media = services.media().get(owner, SAMPLE_ID)
    assert (media.status, media.width, media.height) == ("ready", 900, 700)
    key = media.url.split("/", 3)[3]  # type: ignore[union-attr]
    stored = _s3().get_object(Bucket=bucket, Key=key)
    assert stored["CacheControl"] == "public, max-age=31536000, immutable"
    assert b"GPS" not in stored["Body"].read()
    tags = _s3().get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
    assert tags == [{"Key": "warble-media", "Value": "unattached"}]
    assert "Contents" not in _s3().list_objects_v2(Bucket=bucket, Prefix="uploads/")
    # delivered again (S3 may): nothing changes
    assert _load_function("media").handler(event, Context()) == {
        "media": {f"uploads/{SAMPLE_ID}": "ignored"}
    }


def test_of_tweets_racing_for_one_media_one_transaction_wins(owner):
    media_id = services.ids().next_id()
    table = MediaTable()
    pending = StoredMedia(id=media_id, owner_id=owner, content_type="image/png", size=10,
                          alt_text="", created_at_ms=clock.epoch_ms(), token="t")  # fmt: skip
    table.create(pending)
    from dataclasses import replace

    keys = {"original_key": "media/o.png", "preview_key": "media/p.webp"}
    table.finish(replace(pending, status="ready", width=1, height=1, blurhash="L0", **keys))

    def post(n: int) -> str:
        try:
            return services.tweets().post(owner, f"try {n}", None, [str(media_id)]).id
        except InvalidMedia:
            return "refused"

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(post, range(4)))
    winners = [o for o in outcomes if o != "refused"]
    assert len(winners) == 1
    assert table.get(media_id).tweet_id == int(winners[0])  # type: ignore[union-attr]
    assert table.get(media_id).expires_at is None  # type: ignore[union-attr]


def test_the_lifecycle_rules_expire_unattached_files_and_old_uploads_only(moto):
    from datetime import UTC, datetime, timedelta

    from infra.local.buckets import buckets
    from infra.local.lifecycle import apply_lifecycle
    from infra.local.template import ResolveContext, load_template
    from tests.conftest import ROOT

    template = load_template(ROOT / "template.yaml")
    (spec,) = buckets(template, ResolveContext(stack_name="warble-test"))
    s3 = _s3()
    s3.put_object(
        Bucket=spec.name, Key="media/1/a.jpg", Body=b"x", Tagging="warble-media=unattached"
    )
    s3.put_object(Bucket=spec.name, Key="media/2/b.jpg", Body=b"x")  # a tweet shows it: no tag
    s3.put_object(Bucket=spec.name, Key="uploads/3", Body=b"x")
    ours = {"media/1/a.jpg", "media/2/b.jpg", "uploads/3"}  # the bucket is the session's
    assert ours.isdisjoint(apply_lifecycle(s3, spec))  # nothing is a day old yet
    later = datetime.now(UTC) + timedelta(days=2)
    assert ours & set(apply_lifecycle(s3, spec, now=later)) == {"media/1/a.jpg", "uploads/3"}
    left = {o["Key"] for o in s3.list_objects_v2(Bucket=spec.name).get("Contents", [])}
    assert ours & left == {"media/2/b.jpg"}
