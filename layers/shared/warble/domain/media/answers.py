"""What the media feature answers: API.md's Media, and the upload form of ``POST /v1/media``."""

from __future__ import annotations

from dataclasses import dataclass


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
