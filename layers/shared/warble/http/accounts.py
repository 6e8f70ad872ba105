"""Accounts routes: sign-up, login, logout, sessions and profiles (API.md "Accounts")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from warble import services
from warble.domain.accounts.answers import Auth, Me, SeenUser, Sessions, SocketTicket
from warble.http.app import client_network, first_reads, principal, reads_first, session_token
from warble.http.docs import responses
from warble.http.params import Id, id_or_404
from warble.schemas.accounts import (
    DeleteAccountRequest,
    LoginRequest,
    PasswordChange,
    PasswordResetConfirm,
    PasswordResetRequest,
    ProfilePatch,
    SignupRequest,
)

if TYPE_CHECKING:
    from warble.domain.accounts.service import IssuedSession
    from warble.domain.shared import Later, ReadBatch

router = Router()

PUBLIC_ROUTES = (
    "POST /v1/auth/signup",
    "POST /v1/auth/login",
    "POST /v1/auth/password-reset",
    "POST /v1/auth/password-reset/confirm",
)

# A POST whose answer is a new secret: an Idempotency-Key's repeat is answered with a new ticket
# rather than the first one again, which the idempotency store would then hold in clear for a
# day (a ticket creates nothing a repeat could duplicate; warble.http.app).
UNREPLAYED_ROUTES = ("POST /v1/auth/socket-ticket",)


def _issued(issued: IssuedSession, status: int) -> Response[Any]:
    # With the counts, as every User carries them (a login is not a new account).
    body = issued.answer(services.graph().me(issued.user))
    return Response(status_code=status, content_type="application/json", body=body)


@router.post(
    "/v1/auth/signup",
    summary="Create an account and a first session",
    responses=responses(201, Auth, "Created", e409="username_taken / email_taken"),
)
def signup(body: Annotated[SignupRequest, Body()]) -> Response[Any]:
    issued = services.accounts().signup(
        body.username, body.email, body.password, body.display_name, body.device
    )
    return _issued(issued, 201)


@router.post(
    "/v1/auth/login",
    summary="Log in with a username or email; each login is its own session",
    description="Failed logins count per account and client address: five within 15 minutes"
    " refuse that address (429 rate_limited, Retry-After), not the account's others. 50 from"
    " addresses the account never logged in from refuse every such address; the addresses it"
    " logged in from in the last 30 days still get in.",
    responses=responses(200, Auth, "Logged in", e403="account_suspended", e429="rate_limited"),
)
def login(body: Annotated[LoginRequest, Body()]) -> Response[Any]:
    issued = services.accounts().login(body.login, body.password, body.device, client_network())
    return _issued(issued, 200)


@router.post(
    "/v1/auth/logout", summary="End this session", responses=responses(204, None, "Logged out")
)
def logout() -> Response[Any]:
    me = principal()
    services.accounts().revoke(me, me.session_id)
    return Response(status_code=204)


@router.post(
    "/v1/auth/socket-ticket",
    summary="A single-use ticket for one WebSocket connect, valid 30 seconds",
    description="Connect with `?ticket=<ticket>` rather than `?token=<token>`: a URL is kept by"
    " browser consoles, proxies and access logs, and a ticket read there is already used or"
    " expired. The connection belongs to this session, as a token's would. Ask for a new"
    " ticket before every connect; an Idempotency-Key is accepted and ignored (a repeat gets a"
    " new ticket).",
    responses=responses(201, SocketTicket, "Issued"),
)
def socket_ticket() -> Response[Any]:
    issued = services.tickets().issue(principal(), session_token())
    return Response(status_code=201, content_type="application/json", body=issued)


@router.get(
    "/v1/auth/sessions",
    summary="My live sessions",
    responses=responses(200, Sessions, "Live sessions"),
)
def list_sessions() -> Sessions:
    return services.accounts().list_sessions(principal())


@router.delete(
    "/v1/auth/sessions/<session_id>",
    summary="Revoke one of my sessions",
    responses=responses(204, None, "Revoked", e404="not_found"),
)
def revoke_session(session_id: Id) -> Response[Any]:
    services.accounts().revoke(principal(), id_or_404(session_id, "session"))
    return Response(status_code=204)


@router.get(
    "/v1/users/me",
    summary="My profile, with email",
    responses=responses(200, Me, "The user"),
)
def get_me() -> Me:
    return services.graph().me(services.accounts().own_profile(principal().user_id))


@router.patch("/v1/users/me", summary="Edit my profile", responses=responses(200, Me, "The user"))
def patch_me(body: Annotated[ProfilePatch, Body()]) -> Me:
    changes = body.model_dump(exclude_unset=True)
    return services.graph().me(services.accounts().update_profile(principal(), changes))


@router.put(
    "/v1/users/me/password",
    summary="Change my password; every other session of mine ends",
    responses=responses(204, None, "Changed", e403="invalid_credentials"),
)
def change_password(body: Annotated[PasswordChange, Body()]) -> Response[Any]:
    me = principal()
    services.passwords().change(
        me.user_id, me.session_id, body.current_password, body.password, client_network()
    )
    return Response(status_code=204)


@router.post(
    "/v1/auth/password-reset",
    summary="Mail a password reset link to an account's address (202 whether or not it has one)",
    responses=responses(202, None, "Accepted"),
)
def request_password_reset(body: Annotated[PasswordResetRequest, Body()]) -> Response[Any]:
    services.passwords().request_reset(body.email)
    return Response(status_code=202)


@router.post(
    "/v1/auth/password-reset/confirm",
    summary="Set a new password with a reset token; every session of the account ends",
    responses=responses(204, None, "Password set", e400="validation_error / invalid_token"),
)
def confirm_password_reset(body: Annotated[PasswordResetConfirm, Body()]) -> Response[Any]:
    services.passwords().confirm_reset(body.token, body.password)
    return Response(status_code=204)


@router.delete(
    "/v1/users/me",
    summary="Delete my account, finally (API.md: Deleting an account)",
    responses=responses(202, None, "Deleted; what it made goes within 30 seconds",
                        e403="invalid_credentials"),
)  # fmt: skip
def delete_me(body: Annotated[DeleteAccountRequest, Body()]) -> Response[Any]:
    services.accounts().delete_account(principal(), body.password, client_network())
    return Response(status_code=202)


@router.get(
    "/v1/users/by-username/<username>",
    summary="A user by username (case-insensitive)",
    responses=responses(200, SeenUser, "The user", e404="not_found"),
)
def get_by_username(
    username: Annotated[str, Path(min_length=1, max_length=64, description="any case")],
) -> SeenUser:
    me = principal().user_id
    return services.graph().seen(me, services.accounts().profile_by_username(username))


def _user_reads(batch: ReadBatch, viewer: int, user_id: str) -> Later[SeenUser]:
    return services.graph().user_later(batch, viewer, id_or_404(user_id, "user"))


@router.get(
    "/v1/users/<user_id>",
    summary="A user by id",
    responses=responses(200, SeenUser, "The user", e404="not_found"),
)
@reads_first(_user_reads)
def get_user(user_id: Id) -> SeenUser:
    answer: SeenUser = first_reads(_user_reads, principal().user_id, user_id=user_id)
    return answer
