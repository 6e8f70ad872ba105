"""What the media feature answers: API.md's Media (also as a tweet shows it, from its copy), and
the upload form of ``POST /v1/media``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from warble import clock
from warble.domain.media.ports import READY, AttachedMedia
from warble.domain.shared import EncodedJson


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


# The form of ``encoded_media``'s text: a change of Media's fields (API.md) changes it, and the
# cached texts of the older form are then rendered again instead of used. 2: the tweet cache
# writes the text as JSON in place, where form 1 was a JSON string (``warble.dal.tweet_cache``).
MEDIA_JSON_FORM = 2


def encoded_media(media: Iterable[AttachedMedia], base_url: str) -> str:
    """A tweet's Media list as JSON text, as the answer encoder writes it (compact, UTF-8),
    made once when the tweet is cached: a page of 20 tweets with 4 images each then writes 80
    Media as they are instead of building and encoding them on every read."""
    answers = [dataclasses.asdict(m) for m in media_answers(media, base_url)]
    return json.dumps(answers, ensure_ascii=False, separators=(",", ":"))


class MediaJson(EncodedJson):
    """A tweet's Media list as ``encoded_media`` made it."""

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """For pydantic (the OpenAPI document, the render tests): described as the Media list
        it holds, serialized as the value of its text."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            lambda value: value,
            json_schema_input_schema=handler.generate_schema(list[Media]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: json.loads(
                    value.json if isinstance(value.json, str) else bytes(value.json)
                )
            ),
        )


def media_part(
    media: Iterable[AttachedMedia], cached: tuple[int, str, Any] | None, base_url: str
) -> list[Media] | MediaJson:
    """What a tweet answers for its media: its cached text (``cached``: form, base URL, text as
    a str or bytes-like) when made in this form for this base URL, else the Media made now."""
    if cached is not None and cached[0] == MEDIA_JSON_FORM and cached[1] == base_url:
        return MediaJson(cached[2])
    return media_answers(media, base_url)
