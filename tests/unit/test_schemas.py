"""API.md's validation rules on the request models, and the error body they turn into."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError
from warble.errors import RateLimited
from warble.schemas import errors
from warble.schemas.accounts import LoginRequest, ProfilePatch, SignupRequest
from warble.schemas.tweets import CreateTweet

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
    # in words, not the pattern (issue 34: sign-up showed ^[A-Za-z0-9_]{1,15}$)
    assert details[0].message == "must be 1 to 15 letters (a to z), digits or underscores"
    assert not any("^" in d.message or "pattern" in d.message for d in details)


def test_validation_details_follow_the_field_name_in_words():
    # issue 47, item 15: the web client read "Password String should have at least 8 characters"
    try:
        SignupRequest(username="a" * 16, email="a@b", password="short")
    except ValidationError as exc:
        details = errors.validation_details(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        )
    words = {d.field: d.message for d in details}
    assert words == {
        "username": "must be 1 to 15 letters (a to z), digits or underscores",
        "email": "is not a valid email address",
        "password": "must be at least 8 characters long",
    }, words
    try:
        LoginRequest(login="", password=7)  # type: ignore[arg-type]
    except ValidationError as exc:
        details = errors.validation_details(list(exc.errors()))
    assert [d.message for d in details] == ["must not be empty", "must be text"]
    assert not any("should" in d.message or "Input" in d.message for d in details)


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


def test_the_document_states_the_rules_the_models_enforce():
    from warble.http.meta import openapi_document

    document = json.loads(openapi_document())
    signup = document["components"]["schemas"]["SignupRequest"]["properties"]
    assert signup["email"]["format"] == "email"
    assert (signup["password"]["minLength"], signup["password"]["maxLength"]) == (8, 72)
    # every path id carries the pattern its handler enforces
    for path, operations in document["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"].endswith("_id"):
                    assert "pattern" in parameter["schema"], (path, parameter)


@pytest.mark.parametrize("value", [False, True, "10", None])
def test_location_takes_json_numbers_only(value):
    from warble.schemas.discover import LocationIn

    with pytest.raises(ValidationError):
        LocationIn.model_validate({"lat": 0.0, "lon": value})
    assert LocationIn.model_validate({"lat": 1, "lon": 2.5}).lon == 2.5


def test_json_nested_past_the_bound_is_a_validation_error():
    from warble.errors import ValidationFailed
    from warble.jsonbody import MAX_DEPTH, loads, too_deep

    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    # brackets inside strings do not nest
    assert not too_deep(b'{"text": "' + b"[" * 100 + b'\\"' + b"{" * 100 + b'"}')
    with pytest.raises(ValidationFailed):
        loads("[" * 10_000 + "]" * 10_000)
    with pytest.raises(ValidationFailed):
        loads("{nope")


def test_what_the_document_calls_valid_the_models_accept_and_the_reverse():
    """schemathesis's "schema-valid request rejected" findings (issue 18), at their models."""
    from warble.http.meta import openapi_document
    from warble.schemas.notifications import MarkRead

    schemas = json.loads(openapi_document())["components"]["schemas"]
    # exactly one of types and all: the document says so, null is neither
    assert schemas["MarkRead"]["oneOf"] == [{"required": ["types"]}, {"required": ["all"]}]
    for bad in ({"types": ["home"], "all": True}, {"types": None}, {"all": None}, {}):
        with pytest.raises(ValidationError):
            MarkRead.model_validate(bad)
    # a profile field is absent or a string, never null
    assert "anyOf" not in schemas["ProfilePatch"]["properties"]["bio"]
    with pytest.raises(ValidationError):
        ProfilePatch.model_validate({"bio": None})
    assert ProfilePatch.model_validate({"bio": "x"}).model_dump(exclude_unset=True) == {"bio": "x"}
    # a tweet's text: the after-NFC rule, not the normaliser's guard; with media it may be empty
    text = schemas["CreateTweet"]["properties"]["text"]
    assert (text.get("minLength"), text["maxLength"], text["default"]) == (None, 280, "")
    media = schemas["CreateTweet"]["properties"]["media_ids"]["items"]
    assert (media["minLength"], media["maxLength"]) == (1, 64)
    with pytest.raises(ValidationError):
        CreateTweet.model_validate({"text": "hi", "media_ids": [""]})
    system = schemas["SystemNotificationIn"]["properties"]
    assert system["title"]["pattern"] == system["body"]["pattern"] == r"\S"


def test_notification_types_in_a_query_carry_their_pattern():
    from warble.http.meta import openapi_document

    document = json.loads(openapi_document())
    (types,) = [
        p
        for p in document["paths"]["/v1/notifications"]["get"]["parameters"]
        if p["name"] == "types"
    ]
    pattern = types["schema"].get("pattern") or types["schema"]["anyOf"][0]["pattern"]
    assert re.fullmatch(pattern, "like,follow") and not re.fullmatch(pattern, "0000")


def test_an_integer_past_pythons_digit_limit_is_a_validation_error():
    from warble.errors import ValidationFailed
    from warble.jsonbody import loads, too_long_number

    digits = "9" * 4_400  # Python converts at most 4,300 (sys.get_int_max_str_digits)
    assert too_long_number(b'{"a": ' + digits.encode() + b"}")
    assert not too_long_number(b'{"a": "' + digits.encode() + b'"}')  # text, not a number
    assert not too_long_number(b'{"a": ' + b"9" * 4_000 + b"}")
    with pytest.raises(ValidationFailed):
        loads('{"a": ' + digits + "}")


def test_issue_47_what_the_document_allows_the_server_takes_and_the_reverse():
    """schemathesis's findings of issue 47: an empty tweet or message is schema-invalid (the
    server refuses it), an integral number is a valid media size (JSON Schema's integer), a
    malformed address is no email."""
    from jsonschema import Draft202012Validator
    from warble.domain.text import normalise_text
    from warble.errors import ValidationFailed
    from warble.http.meta import openapi_document
    from warble.schemas.accounts import PasswordResetRequest
    from warble.schemas.conversations import SendMessage
    from warble.schemas.media import CreateMedia

    schemas = json.loads(openapi_document())["components"]["schemas"]

    def valid(name: str, body: dict) -> bool:
        return Draft202012Validator(schemas[name]).is_valid(body)

    # a tweet: text that is not only white space, or media with any text
    for body in ({}, {"text": ""}, {"text": " \n\t"}, {"text": "", "media_ids": []}):
        assert not valid("CreateTweet", body), body
        with pytest.raises(ValidationFailed):
            tweet = CreateTweet.model_validate(body)
            normalise_text(tweet.text, 280, may_be_empty=bool(tweet.media_ids))
    for body in ({"text": "hi"}, {"text": "", "media_ids": ["1"]}, {"media_ids": ["1"]}):
        assert valid("CreateTweet", body), body
        tweet = CreateTweet.model_validate(body)
        normalise_text(tweet.text, 280, may_be_empty=bool(tweet.media_ids))
    # a message: the same text rule, no media
    for body in ({"text": ""}, {"text": "  "}):
        assert not valid("SendMessage", body)
        with pytest.raises(ValidationFailed):
            normalise_text(SendMessage.model_validate(body).text, 2000)
    # a media size: any integral JSON number, but not a fraction, a boolean or a string
    for size in (5242879.0, 1e3, 1):
        body = {"content_type": "image/png", "size": size}
        assert valid("CreateMedia", body)
        assert CreateMedia.model_validate(body).size == int(size)
    for size in (5242879.5, True, "5"):
        body = {"content_type": "image/png", "size": size}
        with pytest.raises(ValidationError):
            CreateMedia.model_validate(body)
    # a reset's address: malformed is a 400
    assert schemas["PasswordResetRequest"]["properties"]["email"]["format"] == "email"
    for address in ("000", "a@", "@example.com", "no-at.example.com"):
        with pytest.raises(ValidationError):
            PasswordResetRequest.model_validate({"email": address})
    assert PasswordResetRequest.model_validate({"email": "a@example.com"}).email == "a@example.com"


@pytest.mark.parametrize(
    "name",
    ["warble_admin", "warbleadmin", "warble_admin_", "Warble_Adm1n", "WARBLEADMlN",
     "warb1e_admin2", "warble_adrnin", "__warble.admin"],
)  # fmt: skip
def test_lookalikes_of_an_admin_name_share_its_skeleton(name):
    from warble.domain.logins import skeleton

    assert skeleton(name) == skeleton("warble_admin") == "warbleadmln"


@pytest.mark.parametrize("name", ["warble_fan", "warbler", "admin", "bob", "adminwarble"])
def test_other_names_do_not(name):
    from warble.domain.logins import skeleton

    assert skeleton(name) != skeleton("warble_admin")
