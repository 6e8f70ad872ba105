"""The export's answer (``warble.http.export.answer``): gzipped for a client that accepts it,
as it is for one that does not, and a clear 406 instead of Lambda's failure when an
uncompressed answer could not be sent."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from warble.errors import ExportTooLarge
from warble.http.export import ANSWER_LIMIT, answer

pytestmark = pytest.mark.unit


def document(tweets: int) -> bytes:
    """An export-like document: tweets of varied words (compresses as real text does)."""
    words = [
        "the",
        "a",
        "morning",
        "run",
        "river",
        "coffee",
        "reading",
        "cache",
        "shop",
        "today",
        "herons",
        "out",
        "km",
    ]
    pick = random.Random(7).choice
    items = [
        {"id": str(10**18 + i), "text": " ".join(pick(words) for _ in range(14)), "like_count": i}
        for i in range(tweets)
    ]
    return json.dumps({"tweets": items}, separators=(",", ":")).encode()


def test_a_client_that_accepts_gzip_gets_the_same_document_gzipped() -> None:
    text = document(2_000)
    packed = answer(text, accepts_gzip=True)
    assert packed.headers["Content-Encoding"] == "gzip"
    assert packed.headers["Vary"] == "Accept-Encoding"
    assert isinstance(packed.body, bytes) and gzip.decompress(packed.body) == text
    assert len(packed.body) < len(text) / 3


def test_a_client_that_does_not_gets_it_as_it_is() -> None:
    text = document(100)
    plain = answer(text, accepts_gzip=False)
    assert plain.body == text.decode() and "Content-Encoding" not in plain.headers
    assert plain.headers["Vary"] == "Accept-Encoding"


def test_a_document_past_an_uncompressed_answer_is_a_406_unless_gzip_is_accepted() -> None:
    text = document(50_000)  # about 6.6 MB: past the limit
    assert len(text) * 1.1 > ANSWER_LIMIT
    with pytest.raises(ExportTooLarge) as refused:
        answer(text, accepts_gzip=False)
    assert (refused.value.status, refused.value.code) == (406, "not_acceptable")
    packed = answer(text, accepts_gzip=True)
    # gzipped and base64 encoded (4/3), it fits a Lambda answer with room to spare
    assert len(packed.body) * 4 / 3 < ANSWER_LIMIT / 2
