"""Typed domain errors. The HTTP layer maps them to API.md's error body in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FieldError:
    field: str
    message: str
    id: str | None = None  # the item of the field it is about (a refused media id)


class WarbleError(Exception):
    """Base of every error a client can cause. ``status`` and ``code`` are API.md's."""

    status = 400
    code = "bad_request"
    message = "Bad request."

    def __init__(self, message: str | None = None, *, code: str | None = None) -> None:
        super().__init__(message or self.message)
        if message:
            self.message = message
        if code:
            self.code = code


class ValidationFailed(WarbleError):
    status = 400
    code = "validation_error"
    message = "The request is not valid."

    def __init__(self, details: list[FieldError] | None = None, message: str | None = None):
        super().__init__(message)
        self.details = details or []


class InvalidMedia(ValidationFailed):
    """API.md: media_ids must name the caller's own ready media, each on one tweet at most;
    ``details`` names each refused id."""

    code = "invalid_media"
    message = "Some of media_ids cannot be attached."

    def __init__(self, refused: list[tuple[str, str]]) -> None:
        super().__init__([FieldError("media_ids", f"{media_id}: {why}", media_id)
                          for media_id, why in refused])  # fmt: skip
        self.refused = [media_id for media_id, _ in refused]


class Unauthorized(WarbleError):
    status = 401
    code = "unauthorized"
    message = "A valid bearer token is required."


class InvalidCredentials(WarbleError):
    status = 401
    code = "invalid_credentials"
    message = "The login or the password is wrong."


class Forbidden(WarbleError):
    status = 403
    code = "forbidden"
    message = "You may not do this."


class NotAllowed(Forbidden):
    """Direct messages: only between friends or matched users (API.md)."""

    code = "not_allowed"
    message = "You can message only friends and people you matched with."


class AccountSuspended(Forbidden):
    """A moderator suspended the account: its login is refused (API.md "Reports and
    moderation")."""

    code = "account_suspended"
    message = "This account is suspended."


class Blocked(Forbidden):
    """A block stands between the two users (API.md "Blocks and mutes")."""

    code = "blocked"
    message = "A block stands between you and this user."


class NotFound(WarbleError):
    status = 404
    code = "not_found"
    message = "Not found."


class MethodNotAllowed(WarbleError):
    """``allowed``: the methods the path serves, for the ``Allow`` header (RFC 9110 15.5.6)."""

    status = 405
    code = "method_not_allowed"
    message = "This method is not allowed on this path."

    def __init__(self, allowed: list[str], message: str | None = None) -> None:
        super().__init__(message)
        self.allowed = allowed


class Conflict(WarbleError):
    status = 409
    code = "conflict"
    message = "Conflict."


class CannotFollowSelf(WarbleError):
    status = 400
    code = "cannot_follow_self"
    message = "You cannot follow yourself."


class FollowLimitReached(Conflict):
    code = "follow_limit_reached"
    message = "You already follow as many users as allowed."


class PayloadTooLarge(WarbleError):
    status = 413
    code = "payload_too_large"
    message = "The request body is larger than 64 KB."


class ExportTooLarge(WarbleError):
    """The export's document is past what an uncompressed answer holds (warble.http.export)."""

    status = 406
    code = "not_acceptable"
    message = (
        "The export is too large to answer uncompressed: ask for it with Accept-Encoding: gzip."
    )


class UnsupportedMediaType(WarbleError):
    status = 415
    code = "unsupported_media_type"
    message = "The request body must be JSON (Content-Type: application/json)."


class RateLimited(WarbleError):
    status = 429
    code = "rate_limited"
    message = "Too many attempts; try again later."

    def __init__(self, retry_after: int, message: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class Unavailable(WarbleError):
    """A store is failing or busy: API.md's 503, with a ``Retry-After`` (seconds) that spreads
    the clients' retries over the time a failover or a paused cache takes to come back."""

    status = 503
    code = "unavailable"
    message = "A dependency is unavailable; try again."

    def __init__(self, message: str | None = None, retry_after: int = 2) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class WorkerIdExhausted(Unavailable):
    """Every Snowflake worker id is leased to a live container: no id can be issued that is
    sure to be unique until one lapses (``warble.ids.LeasedWorker``)."""

    def __init__(self) -> None:
        super().__init__(retry_after=5)


class WorkerLeaseLost(Unavailable):
    """This container's worker-id lease was taken while it was frozen: it issues no id under
    it again (another container may be issuing the same ones), and claims a new id on the next
    request."""

    def __init__(self) -> None:
        super().__init__(retry_after=1)
