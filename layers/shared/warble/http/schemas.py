"""Request and response models: the contract that drives validation and the OpenAPI document."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from warble.ids import SNOWFLAKE_PATTERN

USERNAME_PATTERN = r"^[A-Za-z0-9_]{1,15}$"
# JSON's "\ud800" escapes decode to lone UTF-16 surrogates, which have no UTF-8 form: neither
# PostgreSQL nor DynamoDB (nor bcrypt) can take them. PostgreSQL text cannot hold NUL either.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: str) -> str:
    """A text the stores can hold, else the field's 400 (rather than the store's 500)."""
    found = _UNSTORABLE.search(value)
    if found is not None:
        what = "NUL characters" if found.group() == "\x00" else "unpaired surrogates"
        raise ValueError(f"must not contain {what}")
    return value


class _Model(BaseModel):
    # Each model's validator is built on its first use, not at import: a function uses a few of
    # these models (MetaFunction's OpenAPI document builds them all, on its first request).
    model_config = ConfigDict(defer_build=True)


class _Request(_Model):
    # Strict: JSON types are taken as they are (``false`` is not the number 0, ``"1"`` not 1).
    model_config = ConfigDict(str_strip_whitespace=False, extra="ignore", strict=True)

    # Every text of every request body, lists of texts included, before any store sees it.
    @field_validator("*")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        if isinstance(value, str):
            return storable(value)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    storable(item)
        return value


def _password(value: str) -> str:
    size = len(value.encode("utf-8"))
    if size < 8 or size > 72:
        raise ValueError("must be 8 to 72 bytes of UTF-8")
    return value


class SignupRequest(_Request):
    username: str = Field(pattern=USERNAME_PATTERN, description="1-15 of A-Z a-z 0-9 _")
    email: str = Field(
        min_length=3,
        max_length=254,
        json_schema_extra={"format": "email"},
        description="a deliverable-looking address; compared without case",
    )
    password: str = Field(
        min_length=8, max_length=72, description="8 to 72 bytes of UTF-8 (bcrypt's limit)"
    )
    display_name: str | None = Field(default=None, max_length=50)
    device: str = Field(default="", max_length=100)

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        # Imported here: every HTTP function loads these models, only signup checks an email.
        from email_validator import EmailNotValidError, validate_email

        try:
            return validate_email(value, check_deliverability=False).normalized
        except EmailNotValidError as exc:
            raise ValueError("is not a valid email address") from exc

    _check_password = field_validator("password")(_password)


class LoginRequest(_Request):
    login: str = Field(min_length=1, max_length=254, description="username or email")
    password: str = Field(min_length=1, max_length=1024)
    device: str = Field(default="", max_length=100)


class ProfilePatch(_Request):
    """The fields to change; an absent one stays, and neither may be null."""

    display_name: str = Field(default="", max_length=50)
    bio: str = Field(default="", max_length=160)


# ---- responses (documentation models; handlers return plain JSON built by ``views``) -------
Relationship = Literal["none", "following", "followed_by", "friends"]


class UserOut(_Model):
    id: str
    username: str
    display_name: str
    bio: str
    created_at: str
    followers_count: int
    following_count: int
    tweet_count: int
    relationship: Relationship | None = Field(
        default=None, description="The viewer's relation to this user; absent for the viewer"
    )
    email: str | None = Field(default=None, description="Only on GET /v1/users/me")


class AuthOut(_Model):
    user: UserOut
    token: str
    session_id: str
    expires_at: str


class SessionOut(_Model):
    session_id: str
    device: str
    created_at: str
    last_seen_at: str
    expires_at: str
    current: bool


class SessionsOut(_Model):
    items: list[SessionOut]


class FieldErrorOut(_Model):
    field: str
    message: str


class ErrorBody(_Model):
    code: str
    message: str
    details: list[FieldErrorOut] | None = None


class ErrorOut(_Model):
    error: ErrorBody


class HealthOut(_Model):
    status: Literal["ok"]


# ---- follow graph ---------------------------------------------------------------------------
class RelationshipOut(_Model):
    relationship: Relationship


class UserPageOut(_Model):
    items: list[UserOut]
    next_cursor: str | None = Field(description="Opaque; null when there is nothing more")


class RelationshipItemOut(_Model):
    user_id: str
    status: Relationship
    blocking: bool = Field(description="I block them")
    blocked_by: bool = Field(description="They block me")
    muting: bool = Field(description="I mute them")


class BlockingOut(_Model):
    blocking: bool


class MutingOut(_Model):
    muting: bool


class RelationshipsOut(_Model):
    items: list[RelationshipItemOut]


class MutualFriendsOut(_Model):
    count: int
    items: list[UserOut]


class DegreeOut(_Model):
    degree: Literal[1, 2, 3] | None
    label: Literal["1st", "2nd", "3rd", "3rd+"]


# ---- tweets --------------------------------------------------------------------------------


class CreateTweet(_Request):
    # The 280-character rule applies after NFC normalisation (warble.domain.tweets); this bound
    # only keeps absurd bodies out of the normaliser.
    text: str = Field(
        max_length=4000,
        description="1 to 280 characters after NFC normalisation, not only white space",
        # What the domain checks after NFC (warble.domain.tweets.normalise_text); the model's
        # own bound only keeps absurd bodies out of the normaliser.
        json_schema_extra={"minLength": 1, "maxLength": 280, "pattern": r"\S"},
    )
    reply_to: str | None = Field(default=None, pattern=SNOWFLAKE_PATTERN)
    media_ids: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=4, description="at most 4, each 1 to 64 characters"
    )


class UserSummaryOut(_Model):
    id: str
    username: str
    display_name: str


class TweetOut(_Model):
    id: str
    author: UserSummaryOut
    text: str
    created_at: str
    reply_to: str | None
    retweet_of: TweetOut | None
    media_ids: list[str]
    like_count: int
    retweet_count: int
    reply_count: int
    liked_by_me: bool
    retweeted_by_me: bool


class TweetPageOut(_Model):
    items: list[TweetOut]
    next_cursor: str | None


class LikeOut(_Model):
    liked: bool


# ---- notifications ---------------------------------------------------------------------------
NotificationType = Literal["follow", "like", "reply", "mention", "retweet", "match", "system"]
CountType = Literal[
    "follow", "like", "reply", "mention", "retweet", "match", "system", "message", "home"
]


class MarkRead(_Request):
    """Exactly one of ``types`` (some count fields but ``total``) and ``all: true``."""

    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["types"]}, {"required": ["all"]}]}
    )

    types: list[CountType] = Field(default=None, min_length=1, max_length=9)  # type: ignore[arg-type]
    all: Literal[True] = Field(default=None)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _one_of(self) -> MarkRead:
        if (self.types is None) == (self.all is None):
            raise ValueError("give either types or all, not both and not neither")
        return self


class SystemNotificationIn(_Request):
    title: str = Field(min_length=1, max_length=100, pattern=r"\S")
    body: str = Field(min_length=1, max_length=2000, pattern=r"\S")

    @field_validator("title", "body")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be only white space")
        return value


class NotificationOut(_Model):
    id: str
    type: NotificationType
    actor: UserSummaryOut | None
    tweet_id: str | None
    title: str | None
    body: str | None
    created_at: str
    read: bool
    tweet_deleted: bool | None = Field(default=None, description="set when the tweet is gone")


class NotificationPageOut(_Model):
    items: list[NotificationOut]
    next_cursor: str | None


class UnreadCountsOut(_Model):
    follow: int
    like: int
    reply: int
    mention: int
    retweet: int
    message: int
    match: int
    system: int
    home: int
    total: int


# ---- discover ------------------------------------------------------------------------------
class LocationIn(_Request):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, strict=True)

    lat: float = Field(ge=-90, le=90, description="-90 to 90")
    lon: float = Field(ge=-180, le=180, description="-180 to 180")

    @field_validator("lat", "lon")
    @classmethod
    def _centimetres(cls, value: float) -> float:
        # 7 decimals are about a centimetre; finer is noise, and a number like 1e-184 is below
        # what DynamoDB can store (its smallest magnitude is 1e-130).
        return round(value, 7) + 0.0


class SwipeIn(_Request):
    user_id: str = Field(pattern=SNOWFLAKE_PATTERN, description="the user swiped on")
    direction: Literal["left", "right"]


class NearbyUserOut(UserOut):
    distance_km: float = Field(description="great-circle distance, rounded to 0.01 km")


class DiscoverOut(_Model):
    items: list[NearbyUserOut]


class SwipeOut(_Model):
    matched: bool
    conversation_id: str | None


class MatchOut(_Model):
    user: UserOut
    conversation_id: str
    matched_at: str


class MatchPageOut(_Model):
    items: list[MatchOut]
    next_cursor: str | None


# ---- conversations -------------------------------------------------------------------------
class OpenConversation(_Request):
    participant_id: str = Field(pattern=SNOWFLAKE_PATTERN, description="the other user's id")


class SendMessage(_Request):
    # The 2000-character rule applies after NFC normalisation (warble.domain.conversations).
    text: str = Field(
        max_length=8000,
        description="1 to 2000 characters after NFC normalisation, not only white space",
        json_schema_extra={"minLength": 1, "maxLength": 2000, "pattern": r"\S"},
    )


class SendMessageFrame(SendMessage):
    """The WebSocket ``sendMessage`` frame (``action`` selected the route)."""

    action: Literal["sendMessage"]
    conversation_id: str = Field(pattern=SNOWFLAKE_PATTERN)
    client_id: str | None = Field(default=None, min_length=1, max_length=64)


class MessageOut(_Model):
    id: str
    conversation_id: str
    sender_id: str
    text: str
    created_at: str


class ConversationOut(_Model):
    id: str
    participants: list[UserSummaryOut]
    last_message: MessageOut | None
    unread_count: int


class ConversationPageOut(_Model):
    items: list[ConversationOut]
    next_cursor: str | None


class MessagePageOut(_Model):
    items: list[MessageOut]
    next_cursor: str | None
