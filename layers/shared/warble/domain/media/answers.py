"""What the media feature answers: API.md's Media (also as a tweet shows it, from its copy), and
the upload form of ``POST /v1/media``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from warble import clock
from warble.domain.media.ports import READY, AttachedMedia


@dataclass(slots=True)
class MediaError:
    code: str
    message: str


@dataclass(slots=True)
class Media:
    """API.md's Media. ``width`` .. ``blurhash`` are null until ``status`` is ``ready``; a
    ``failed`` Media carries its ``error``."""

    id: str
    type: str
    content_type: str
    status: str
    size: int
    width: int | None
    height: int | None
    url: str | None
    preview_url: str | None
    blurhash: str | None
    alt_text: str
    created_at: str
    error: MediaError | None = None


@dataclass(slots=True)
class UploadForm:
    """S3's browser POST: send every field, then the file as the field ``file``."""

    url: str
    fields: dict[str, str]


@dataclass(slots=True)
class MediaUpload:
    media: Media
    upload: UploadForm
    expires_at: str


@lru_cache(maxsize=4096)
def _created_at(epoch_ms: int) -> str:
    return clock.rfc3339_ms(epoch_ms)


def file_url(base_url: str, key: str | None) -> str:
    """A file's address: the CDN's (MEDIA_URL, no trailing slash) before its key in the bucket.
    The one place a media URL is built."""
    return f"{base_url}/{key}"


def media_answers(media: Iterable[AttachedMedia], base_url: str) -> list[Media]:
    """The Media a tweet shows (always ready), from its copies on the tweet. A page shows up to
    80 of them: one comprehension, positional arguments, the times formatted once per
    container."""
    return [
        Media(
            str(m.id),
            "image",
            m.content_type,
            READY,
            m.size,
            m.width,
            m.height,
            file_url(base_url, m.original_key),
            file_url(base_url, m.preview_key),
            m.blurhash,
            m.alt_text,
            _created_at(m.created_at_ms),
        )
        for m in media
    ]
