"""What media needs of its stores (``warble.dal.media``), of the image library
(``warble.imaging``) and of tweets, and the records it keeps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, overload

from warble.imaging import ProcessedImage

PENDING, READY, FAILED = "pending", "ready", "failed"


@dataclass(slots=True)  # not frozen: a page builds 80 of them, and frozen inits cost 3x
class AttachedMedia:
    """What a tweet keeps of each of its media (on the tweet item): all a Media answer needs, so
    a page of tweets renders its images without reading the media table."""

    id: int
    content_type: str
    size: int
    width: int
    height: int
    original_key: str
    preview_key: str
    blurhash: str
    alt_text: str
    created_at_ms: int
    rev: int = 0

    def record(self) -> list[Any]:
        """The cached form (inside a tweet's): the values in field order. A page of 20 tweets
        with 4 images each decodes 80 of these; as lists they parse in half the time of maps."""
        return [getattr(self, name) for name in _ATTACHED_FIELDS]

    @classmethod
    def from_records(cls, records: list[list[Any]]) -> tuple[AttachedMedia, ...]:
        """A tweet's media from their cached forms (one comprehension: a page reads 80)."""
        return tuple([cls(*record) for record in records])

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _ATTACHED_FIELDS}


_ATTACHED_FIELDS = tuple(spec.name for spec in fields(AttachedMedia))


class CachedMedia(Sequence[AttachedMedia]):
    """A cached tweet's media copies as the cache read them (their JSON, bytes-like), decoded on
    first use: a page answers a cached tweet's media from its rendered parts
    (``warble.domain.tweets.answers.tweet_parts``), so its 80 copies are not built on every
    read."""

    __slots__ = ("_items", "_json")

    def __init__(self, json_text: Any) -> None:
        self._json = json_text
        self._items: tuple[AttachedMedia, ...] | None = None

    def _decoded(self) -> tuple[AttachedMedia, ...]:
        if self._items is None:
            self._items = AttachedMedia.from_records(json.loads(bytes(self._json)))
        return self._items

    @overload
    def __getitem__(self, index: int) -> AttachedMedia: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[AttachedMedia, ...]: ...
    def __getitem__(self, index: int | slice) -> AttachedMedia | tuple[AttachedMedia, ...]:
        return self._decoded()[index]

    def __len__(self) -> int:
        return len(self._decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return self._decoded() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._decoded())

    def __repr__(self) -> str:
        return repr(self._decoded())


def media_copies(cached: Any) -> Sequence[AttachedMedia]:
    """A cached tweet's ``media``: records (a list), or their JSON as a typed cache read them
    (decoded when used), or nothing (a tweet cached before tweets had media)."""
    if isinstance(cached, list):
        return AttachedMedia.from_records(cached)
    if not cached or len(cached) <= 2:  # None, or "[]"
        return ()
    return CachedMedia(cached)


@dataclass(frozen=True)
class StoredMedia:
    """A media item as stored: pending until the MediaFunction has read its upload."""

    id: int
    owner_id: int
    content_type: str
    size: int
    alt_text: str
    created_at_ms: int
    token: str  # makes the file names unguessable
    status: str = PENDING
    expires_at: int | None = None  # epoch seconds (the table's TTL); none once attached
    tweet_id: int | None = None
    width: int | None = None
    height: int | None = None
    original_key: str | None = None
    preview_key: str | None = None
    blurhash: str | None = None
    error: tuple[str, str] | None = None  # (code, message) of a failed one
    rev: int = 0  # bumped by every alt text change: the tweet's copy follows the newest

    @property
    def upload_key(self) -> str:
        return upload_key(self.id)

    def attached(self) -> AttachedMedia:
        return AttachedMedia(
            id=self.id,
            content_type=self.content_type,
            size=self.size,
            width=self.width or 0,
            height=self.height or 0,
            original_key=self.original_key or "",
            preview_key=self.preview_key or "",
            blurhash=self.blurhash or "",
            alt_text=self.alt_text,
            created_at_ms=self.created_at_ms,
            rev=self.rev,
        )


UPLOADS = "uploads/"


def upload_key(media_id: int) -> str:
    return f"{UPLOADS}{media_id}"


class MediaStore(Protocol):
    def create(self, media: StoredMedia) -> None: ...
    def get(self, media_id: int) -> StoredMedia | None: ...
    def get_many(self, media_ids: list[int]) -> list[StoredMedia]: ...
    def set_alt_text(self, owner_id: int, media_id: int, alt_text: str) -> StoredMedia | None: ...
    def finish(self, media: StoredMedia) -> bool: ...
    def delete_many(self, media_ids: list[int]) -> None: ...
    def owned_ids(self, owner_id: int) -> list[int]:
        """Every media id of an owner, newest first (the table's ``owner`` index)."""
        ...


class ObjectStore(Protocol):
    """The bucket behind the CDN."""

    def upload_form(
        self, key: str, content_type: str, max_bytes: int, expires_seconds: int
    ) -> tuple[str, dict[str, str]]: ...
    def read(self, key: str) -> bytes | None: ...
    def put(self, key: str, body: bytes, content_type: str) -> None: ...
    def keep(self, keys: list[str]) -> None: ...
    def delete(self, keys: list[str]) -> None: ...


class ImageProcessor(Protocol):
    def __call__(self, data: bytes, declared: str) -> ProcessedImage: ...


class TweetMedia(Protocol):
    """What media needs of tweets: a tweet's copy of one of its media brought up to date."""

    def media_changed(self, tweet_id: int, media: AttachedMedia) -> None: ...


@dataclass(frozen=True)
class MediaPolicy:
    base_url: str  # the CDN's, before the files' keys
    upload_seconds: int = 900
    unattached_seconds: int = 86_400
    max_bytes: int = 5 * 1024 * 1024
    types: frozenset[str] = field(
        default=frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
    )
