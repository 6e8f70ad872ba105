"""Media: an upload goes straight to the bucket (a presigned POST whose policy pins the key, the
exact type and the size), the MediaFunction reads it when S3 says it arrived and marks the Media
ready or failed, and a tweet keeps a copy of what it shows of its media (``AttachedMedia``).

A Media never attached is deleted without a scan: its item by the table's TTL, its files by the
bucket's lifecycle rule on the tag they are written with (``ObjectStore.put``); the tweets
stream's cleanup consumer removes the tag once a tweet shows them (``attached``) and deletes them
with the tweet (``forget``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import replace

from warble import clock
from warble.domain.media.answers import Media, MediaError, MediaUpload, UploadForm, file_url
from warble.domain.media.ports import (
    FAILED,
    PENDING,
    READY,
    UPLOADS,
    AttachedMedia,
    ImageProcessor,
    MediaPolicy,
    MediaStore,
    ObjectStore,
    StoredMedia,
    TweetMedia,
)
from warble.domain.shared import IdGenerator
from warble.errors import FieldError, InvalidMedia, NotFound, ValidationFailed
from warble.events import TweetDeleted, TweetPosted
from warble.imaging import EXTENSIONS, PREVIEW_TYPE, ImageRefused

MAX_ALT_TEXT = 1500


def media_keys(media: Iterable[AttachedMedia]) -> list[str]:
    return [key for m in media for key in (m.original_key, m.preview_key) if key]


class MediaService:
    def __init__(
        self,
        store: MediaStore,
        objects: ObjectStore,
        process: ImageProcessor,
        ids: IdGenerator,
        policy: MediaPolicy,
        tweets: TweetMedia,
    ) -> None:
        self._store = store
        self._objects = objects
        self._process = process
        self._ids = ids
        self.policy = policy
        self._tweets = tweets

    # ---- the API ------------------------------------------------------------------------
    def create(self, owner_id: int, content_type: str, size: int, alt_text: str) -> MediaUpload:
        policy = self.policy
        problems = []
        if content_type not in policy.types:
            kinds = ", ".join(sorted(policy.types))
            problems.append(FieldError("content_type", f"must be one of {kinds}"))
        if not 1 <= size <= policy.max_bytes:
            problems.append(FieldError("size", f"must be 1 to {policy.max_bytes} bytes"))
        if len(alt_text) > MAX_ALT_TEXT:
            problems.append(FieldError("alt_text", f"must be at most {MAX_ALT_TEXT} characters"))
        if problems:
            raise ValidationFailed(problems)
        now_ms = clock.epoch_ms()
        media = StoredMedia(
            id=self._ids.next_id(),
            owner_id=owner_id,
            content_type=content_type,
            size=size,
            alt_text=alt_text,
            created_at_ms=now_ms,
            token=secrets.token_urlsafe(12),
            expires_at=now_ms // 1000 + policy.unattached_seconds,
        )
        self._store.create(media)
        url, fields = self._objects.upload_form(
            media.upload_key, content_type, size, policy.upload_seconds
        )
        return MediaUpload(
            media=self.answer(media),
            upload=UploadForm(url=url, fields=fields),
            expires_at=clock.rfc3339_ms(now_ms + policy.upload_seconds * 1000),
        )

    def get(self, viewer: int, media_id: int) -> Media:
        """The viewer's own Media, or another user's that a tweet shows."""
        media = self._live(media_id)
        if media is None or (media.owner_id != viewer and media.tweet_id is None):
            raise NotFound("No such media.")
        return self.answer(media)

    def set_alt_text(self, owner_id: int, media_id: int, alt_text: str) -> Media:
        if len(alt_text) > MAX_ALT_TEXT:
            too_long = FieldError("alt_text", f"must be at most {MAX_ALT_TEXT} characters")
            raise ValidationFailed([too_long])
        if self._live(media_id) is None:
            raise NotFound("No such media.")
        media = self._store.set_alt_text(owner_id, media_id, alt_text)
        if media is None:
            raise NotFound("No such media.")
        if media.tweet_id is not None:
            self._tweets.media_changed(media.tweet_id, media.attached())
        return self.answer(media)

    def owned(self, owner_id: int) -> list[Media]:
        """Every Media of an owner, newest first, attached or not (the export)."""
        now = clock.epoch_s()
        found = self._store.get_many(self._store.owned_ids(owner_id))
        live = [m for m in found if m.owner_id == owner_id and (m.expires_at or now) >= now]
        return [self.answer(m) for m in sorted(live, key=lambda m: m.id, reverse=True)]

    def _live(self, media_id: int) -> StoredMedia | None:
        """The media, unless its TTL has passed (DynamoDB deletes it within a day or two)."""
        media = self._store.get(media_id)
        if media is None or (media.expires_at is not None and media.expires_at < clock.epoch_s()):
            return None
        return media

    def answer(self, media: StoredMedia) -> Media:
        base = self.policy.base_url
        ready = media.status == READY
        return Media(
            id=str(media.id),
            type="image",
            content_type=media.content_type,
            status=media.status,
            size=media.size,
            width=media.width if ready else None,
            height=media.height if ready else None,
            url=file_url(base, media.original_key) if ready else None,
            preview_url=file_url(base, media.preview_key) if ready else None,
            blurhash=media.blurhash if ready else None,
            alt_text=media.alt_text,
            created_at=clock.rfc3339_ms(media.created_at_ms),
            error=MediaError(*media.error) if media.status == FAILED and media.error else None,
        )

    # ---- tweets ---------------------------------------------------------------------------
    def attachable(self, owner_id: int, media_ids: list[str]) -> list[AttachedMedia]:
        """What a new tweet of ``owner_id`` shows of ``media_ids``, in order; InvalidMedia
        names every id that is not the owner's own ready media, free of any tweet (the tweet's
        transaction checks the same again, atomically)."""
        refused: list[tuple[str, str]] = []
        wanted: list[int] = []
        for raw in media_ids:
            if not raw.isdigit() or len(raw) > 19:
                refused.append((raw, "no such media"))
            elif int(raw) in wanted:
                refused.append((raw, "named twice"))
            else:
                wanted.append(int(raw))
        found = {m.id: m for m in self._store.get_many(wanted)} if wanted else {}
        now = clock.epoch_s()
        for media_id in wanted:
            media = found.get(media_id)
            if (
                media is None
                or media.owner_id != owner_id
                or (media.expires_at is not None and media.expires_at < now)
            ):
                refused.append((str(media_id), "no such media"))
            elif media.status != READY:
                refused.append((str(media_id), f"is {media.status}, not ready"))
            elif media.tweet_id is not None:
                refused.append((str(media_id), "is attached to another tweet"))
        if refused:
            raise InvalidMedia(refused)
        return [found[media_id].attached() for media_id in wanted]

    def attached(self, events: list[TweetPosted]) -> None:
        """Tweets that show media: their files are kept (the lifecycle rule's tag goes)."""
        keys = [key for event in events for key in event.media_keys]
        if keys:
            self._objects.keep(keys)

    def forget(self, events: list[TweetDeleted]) -> None:
        """Deleted tweets: their media's files and items go with them (idempotent)."""
        keys = [key for event in events for key in event.media_keys]
        ids = [media_id for event in events for media_id in event.media_ids]
        if keys:
            self._objects.delete(keys)
        if ids:
            self._store.delete_many(ids)

    # ---- the MediaFunction ----------------------------------------------------------------
    def uploaded(self, key: str) -> str:
        """An object arrived under ``uploads/``: the Media becomes ready or failed. Answers
        what happened (S3 may tell twice: a Media no longer pending is left alone)."""
        media_id = key[len(UPLOADS) :] if key.startswith(UPLOADS) else ""
        media = self._store.get(int(media_id)) if media_id.isdigit() else None
        if media is None or media.status != PENDING:
            self._objects.delete([key])
            return "ignored"
        data = self._objects.read(key)
        if data is None:
            return "gone"
        if len(data) > media.size:  # the policy's content-length-range already refuses these
            too_large = ("file_too_large", "The file is larger than declared.")
            done = replace(media, status=FAILED, error=too_large)
        else:
            done = self._processed(media, data)
        self._store.finish(done)
        self._objects.delete([key])
        return done.status

    def _processed(self, media: StoredMedia, data: bytes) -> StoredMedia:
        try:
            image = self._process(data, media.content_type)
        except ImageRefused as refused:
            return replace(media, status=FAILED, error=(refused.code, refused.message))
        stem = f"media/{media.id}/{media.token}"
        original = f"{stem}.{EXTENSIONS[media.content_type]}"
        preview = f"{stem}.preview.{EXTENSIONS[PREVIEW_TYPE]}"
        self._objects.put(original, image.original, media.content_type)
        self._objects.put(preview, image.preview, PREVIEW_TYPE)
        return replace(
            media,
            status=READY,
            size=len(data),
            width=image.width,
            height=image.height,
            original_key=original,
            preview_key=preview,
            blurhash=image.blurhash,
        )
