"""Media items in DynamoDB (``MediaTable``, one item per media id) and their files in S3
(``MediaBucket``, behind CloudFront).

An item lives 24 hours unless a tweet shows it: the table's TTL (``expires_at``), removed in the
posting tweet's own transaction (``claim``). Its files are written with the tag ``UNATTACHED``,
which the bucket's lifecycle rule expires after a day; the tweets stream's cleanup consumer
removes the tag once a tweet shows them (``keep``), and deletes them with the tweet.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, UpdateError
from pynamodb.indexes import GlobalSecondaryIndex, KeysOnlyProjection
from pynamodb.models import Model

from warble.dal.dynamo import CONDITION_FAILED, _session, batch_write, bind
from warble.domain.media.ports import PENDING, READY, AttachedMedia, StoredMedia
from warble.settings import Settings, get_settings

# Immutable URLs: a file under a key never changes (API.md: a day at least; a year here).
CACHE_CONTROL = "public, max-age=31536000, immutable"
UNATTACHED = ("warble-media", "unattached")
S3_ATTEMPTS = 2


class _ByOwner(GlobalSecondaryIndex["MediaItem"]):
    """An owner's media (the export; an account's deletion)."""

    class Meta:
        index_name = "owner"
        projection = KeysOnlyProjection()

    owner_id = NumberAttribute(hash_key=True)
    media_id = NumberAttribute(range_key=True)


class MediaItem(Model):
    class Meta:
        table_name = "media"  # replaced from settings on first use
        region = "us-east-1"

    media_id = NumberAttribute(hash_key=True)
    owner_id = NumberAttribute()
    by_owner = _ByOwner()
    content_type = UnicodeAttribute()
    size = NumberAttribute()
    alt_text = UnicodeAttribute(default="")
    created_at_ms = NumberAttribute()
    token = UnicodeAttribute()
    status = UnicodeAttribute(default=PENDING)
    expires_at = NumberAttribute(null=True)
    tweet_id = NumberAttribute(null=True)
    width = NumberAttribute(null=True)
    height = NumberAttribute(null=True)
    original_key = UnicodeAttribute(null=True)
    preview_key = UnicodeAttribute(null=True)
    blurhash = UnicodeAttribute(null=True)
    error_code = UnicodeAttribute(null=True)
    error_message = UnicodeAttribute(null=True)
    rev = NumberAttribute(default=0)


def _stored(item: MediaItem) -> StoredMedia:
    def num(value: Any) -> int | None:
        return None if value is None else int(value)

    return StoredMedia(
        id=int(item.media_id),
        owner_id=int(item.owner_id),
        content_type=item.content_type,
        size=int(item.size),
        alt_text=item.alt_text or "",
        created_at_ms=int(item.created_at_ms),
        token=item.token,
        status=item.status,
        expires_at=num(item.expires_at),
        tweet_id=num(item.tweet_id),
        width=num(item.width),
        height=num(item.height),
        original_key=item.original_key,
        preview_key=item.preview_key,
        blurhash=item.blurhash,
        error=(item.error_code, item.error_message or "") if item.error_code else None,
        rev=int(item.rev or 0),
    )


def claim(tx: Any, owner_id: int, tweet_id: int, media: AttachedMedia) -> None:
    """In a tweet's transaction: the media becomes the tweet's, if it is still the owner's own
    ready media, on no tweet, with the alt text the tweet copies (``rev``); no TTL any more."""
    item = MediaItem(media.id)
    tx.update(
        item,
        actions=[MediaItem.tweet_id.set(tweet_id), MediaItem.expires_at.remove()],
        condition=(MediaItem.owner_id == owner_id)
        & (MediaItem.status == READY)
        & MediaItem.tweet_id.does_not_exist()
        & (MediaItem.rev == media.rev),
    )


class MediaTable:
    """The media store behind ``warble.domain.media.ports.MediaStore``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        bind(settings.aws_region, [(MediaItem, settings.media_table)])

    def create(self, media: StoredMedia) -> None:
        MediaItem(
            media.id,
            owner_id=media.owner_id,
            content_type=media.content_type,
            size=media.size,
            alt_text=media.alt_text,
            created_at_ms=media.created_at_ms,
            token=media.token,
            status=media.status,
            expires_at=media.expires_at,
        ).save(condition=MediaItem.media_id.does_not_exist())

    def get(self, media_id: int) -> StoredMedia | None:
        try:
            return _stored(MediaItem.get(media_id, consistent_read=True))
        except DoesNotExist:
            return None

    def get_many(self, media_ids: list[int]) -> list[StoredMedia]:
        if not media_ids:
            return []
        return [_stored(item) for item in MediaItem.batch_get(media_ids, consistent_read=True)]

    def owned_ids(self, owner_id: int) -> list[int]:
        return [
            int(item.media_id)
            for item in MediaItem.by_owner.query(owner_id, scan_index_forward=False)
        ]

    def set_alt_text(self, owner_id: int, media_id: int, alt_text: str) -> StoredMedia | None:
        item = MediaItem(media_id)
        try:
            item.update(
                actions=[MediaItem.alt_text.set(alt_text), MediaItem.rev.add(1)],
                condition=MediaItem.owner_id == owner_id,
            )
        except UpdateError as exc:
            if exc.cause_response_code == CONDITION_FAILED + "Exception":
                return None
            raise
        return _stored(item)

    def finish(self, media: StoredMedia) -> bool:
        """pending -> ready or failed, once (S3 may deliver an upload's event twice)."""
        code, message = media.error or ("", "")
        try:
            MediaItem(media.id).update(
                actions=[
                    MediaItem.status.set(media.status),
                    MediaItem.size.set(media.size),
                    *(
                        [
                            MediaItem.width.set(media.width or 0),
                            MediaItem.height.set(media.height or 0),
                            MediaItem.original_key.set(media.original_key or ""),
                            MediaItem.preview_key.set(media.preview_key or ""),
                            MediaItem.blurhash.set(media.blurhash or ""),
                        ]
                        if media.status == READY
                        else [
                            MediaItem.error_code.set(code),
                            MediaItem.error_message.set(message),
                        ]
                    ),
                ],
                condition=MediaItem.status == PENDING,
            )
        except UpdateError as exc:
            if exc.cause_response_code == CONDITION_FAILED + "Exception":
                return False
            raise
        return True

    def delete_many(self, media_ids: list[int]) -> None:
        with batch_write(MediaItem) as batch:
            for media_id in dict.fromkeys(media_ids):
                batch.delete(MediaItem(media_id))


class MediaBucket:
    """The files, behind ``warble.domain.media.ports.ObjectStore``: S3 through the standard
    endpoint settings (locally AWS_ENDPOINT_URL_S3 names the local runtime's S3 endpoint)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings or get_settings()
        self.bucket = self._settings.media_bucket

    @cached_property
    def _s3(self) -> Any:
        from botocore.config import Config

        # SigV4 forms (x-amz-credential ...): every region takes them, some take nothing else.
        # Its callers are asynchronous (MediaFunction, the stream readers, the deletion chain),
        # each retried by Lambda or its queue: botocore's standard mode with one retry, not the
        # legacy mode's four, whose backoff could sleep 15 s on an S3 that is down.
        config = Config(
            signature_version="s3v4",
            retries={"mode": "standard", "total_max_attempts": S3_ATTEMPTS},
        )
        return _session().create_client("s3", region_name=self._settings.aws_region, config=config)

    def upload_form(
        self, key: str, content_type: str, max_bytes: int, expires_seconds: int
    ) -> tuple[str, dict[str, str]]:
        form = self._s3.generate_presigned_post(
            Bucket=self.bucket,
            Key=key,
            Fields={"Content-Type": content_type},
            Conditions=[
                {"bucket": self.bucket},
                ["eq", "$key", key],
                ["eq", "$Content-Type", content_type],
                ["content-length-range", 1, max_bytes],
            ],
            ExpiresIn=expires_seconds,
        )
        return str(form["url"]), {name: str(value) for name, value in form["fields"].items()}

    def read(self, key: str) -> bytes | None:
        try:
            answer = self._s3.get_object(Bucket=self.bucket, Key=key)
        except self._s3.exceptions.NoSuchKey:
            return None
        return bytes(answer["Body"].read())

    def put(self, key: str, body: bytes, content_type: str) -> None:
        name, value = UNATTACHED
        self._s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=body,
            ContentType=content_type,
            CacheControl=CACHE_CONTROL,
            Tagging=f"{name}={value}",
        )

    def keep(self, keys: list[str]) -> None:
        for key in keys:
            try:
                self._s3.delete_object_tagging(Bucket=self.bucket, Key=key)
            except self._s3.exceptions.NoSuchKey:
                continue  # deleted since (the tweet too): nothing to keep

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            self._s3.delete_objects(
                Bucket=self.bucket,
                Delete={
                    "Objects": [{"Key": key} for key in keys[start : start + 1000]],
                    "Quiet": True,
                },
            )
