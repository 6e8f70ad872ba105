"""API.md's validation rules on the request models, and the error body they turn into."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from warble.errors import RateLimited
from warble.http import errors
from warble.http.schemas import CreateTweet, LoginRequest, ProfilePatch, SignupRequest

pytestmark = pytest.mark.unit

GOOD = {"username": "Alice_1", "email": "alice@example.com", "password": "password1"}


@pytest.mark.parametrize(
    "field, value",
    [
        ("username", ""),
        ("username", "a" * 16),
        ("username", "bad-name"),
        ("username", "spaced name"),
        ("username", "émile"),
        ("email", "not-an-email"),
        ("email", "a@b"),
        ("password", "short"),
        ("password", "x" * 73),
        ("password", "é" * 37),  # 74 bytes of UTF-8
        ("display_name", "x" * 51),
        ("username", 12345),
    ],
)
def test_signup_rejects(field, value):
    with pytest.raises(ValidationError) as error:
        SignupRequest(**{**GOOD, field: value})
    assert error.value.errors()[0]["loc"][0] == field


def test_signup_accepts_the_edges():
    SignupRequest(**{**GOOD, "username": "a" * 15, "password": "x" * 72, "display_name": ""})
    SignupRequest(**{**GOOD, "username": "_", "password": "é" * 36})


def test_profile_patch_limits():
    ProfilePatch(bio="x" * 160, display_name="y" * 50)
    with pytest.raises(ValidationError):
        ProfilePatch(bio="x" * 161)


def test_login_requires_both_fields():
    with pytest.raises(ValidationError):
        LoginRequest(login="", password="x")


def test_validation_details_name_each_bad_field():
    try:
        SignupRequest(username="!", email="nope", password="x")
    except ValidationError as exc:
        details = errors.validation_details(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        )
    assert [d.field for d in details] == ["username", "email", "password"]
    assert all(d.message for d in details)


def test_rate_limited_carries_retry_after():
    status, headers, body = errors.describe(RateLimited(42))
    assert status == 429 and headers["Retry-After"] == "42"
    assert json.loads(body) == {
        "error": {"code": "rate_limited", "message": "Too many attempts; try again later."}
    }


# Issue 14 #1: PostgreSQL text cannot hold NUL, and a lone surrogate (JSON "\ud800") has no UTF-8
# form for either store; both are the field's 400, never the store's 500.
@pytest.mark.parametrize("bad", ["\x00", "ali\x00ce", "\ud800", "a\udfffb"])
@pytest.mark.parametrize(
    "model, base, field",
    [
        (LoginRequest, {"login": "alice", "password": "password1"}, "login"),
        (LoginRequest, {"login": "alice", "password": "password1"}, "password"),
        (LoginRequest, {"login": "alice", "password": "password1"}, "device"),
        (SignupRequest, GOOD, "password"),
        (SignupRequest, GOOD, "display_name"),
        (SignupRequest, GOOD, "device"),
        (ProfilePatch, {}, "display_name"),
        (ProfilePatch, {}, "bio"),
        (CreateTweet, {"text": "hello"}, "text"),
    ],
)
def test_text_the_stores_cannot_hold_is_a_field_error(model, base, field, bad):
    with pytest.raises(ValidationError) as raised:
        model.model_validate({**base, field: bad if field != "password" else "password" + bad})
    assert [err["loc"] for err in raised.value.errors()] == [(field,)]


def test_texts_inside_lists_are_checked_too():
    with pytest.raises(ValidationError) as raised:
        CreateTweet.model_validate({"text": "hi", "media_ids": ["ok", "m\x00"]})
    assert raised.value.errors()[0]["loc"] == ("media_ids",)
    # Other control characters and astral characters are storable, and kept as sent.
    assert CreateTweet.model_validate({"text": "a\tb\x01 🐦"}).text == "a\tb\x01 🐦"
