"""Accounts routes: sign-up, login, logout, sessions and profiles (API.md "Accounts")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from warble import clock, services
from warble.http import views
from warble.http.app import first_reads, principal, reads_first
from warble.http.docs import responses
from warble.http.params import Id, id_or_404
from warble.schemas.accounts import (
    AuthOut,
    LoginRequest,
    ProfilePatch,
    SessionsOut,
    SignupRequest,
    UserOut,
)

if TYPE_CHECKING:
    from warble.domain.accounts.service import IssuedSession
    from warble.domain.shared import Later, ReadBatch

router = Router()

PUBLIC_ROUTES = ("POST /v1/auth/signup", "POST /v1/auth/login")


def _issued(issued: IssuedSession, status: int) -> Response[Any]:
    body = {
        # With the counts, as every User carries them (a login is not a new account).
        "user": views.user(services.graph().enrich(None, issued.user), me=True),
        "token": issued.token,
        "session_id": str(issued.session.id),
        "expires_at": clock.rfc3339(issued.session.expires_at),
    }
    return Response(status_code=status, content_type="application/json", body=body)


@router.post(
    "/v1/auth/signup",
    summary="Create an account and a first session",
    responses=responses(201, AuthOut, "Created", e409="username_taken / email_taken"),
)
def signup(body: Annotated[SignupRequest, Body()]) -> Response[Any]:
    issued = services.accounts().signup(
        body.username, body.email, body.password, body.display_name, body.device
    )
    return _issued(issued, 201)


@router.post(
    "/v1/auth/login",
    summary="Log in with a username or email; each login is its own session",
    responses=responses(200, AuthOut, "Logged in", e429="rate_limited"),
)
def login(body: Annotated[LoginRequest, Body()]) -> Response[Any]:
    return _issued(services.accounts().login(body.login, body.password, body.device), 200)


@router.post(
    "/v1/auth/logout", summary="End this session", responses=responses(204, None, "Logged out")
)
def logout() -> Response[Any]:
    me = principal()
    services.accounts().revoke(me, me.session_id)
    return Response(status_code=204)


@router.get(
    "/v1/auth/sessions",
    summary="My live sessions",
    responses=responses(200, SessionsOut, "Live sessions"),
)
def list_sessions() -> dict[str, Any]:
    rows = services.accounts().list_sessions(principal())
    return {"items": [views.session(row, current) for row, current in rows]}


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
    responses=responses(200, UserOut, "The user"),
)
def get_me() -> dict[str, Any]:
    record = services.accounts().profile(principal().user_id)
    return views.user(services.graph().enrich(None, record), me=True)


@router.patch(
    "/v1/users/me", summary="Edit my profile", responses=responses(200, UserOut, "The user")
)
def patch_me(body: Annotated[ProfilePatch, Body()]) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)
    record = services.accounts().update_profile(principal(), changes)
    return views.user(services.graph().enrich(None, record), me=True)


@router.get(
    "/v1/users/by-username/<username>",
    summary="A user by username (case-insensitive)",
    responses=responses(200, UserOut, "The user", e404="not_found"),
)
def get_by_username(
    username: Annotated[str, Path(min_length=1, max_length=64, description="any case")],
) -> dict[str, Any]:
    me = principal()
    record = services.accounts().profile_by_username(username)
    return views.user(services.graph().enrich(me.user_id, record), viewer_id=me.user_id)


def _user_reads(batch: ReadBatch, viewer: int, user_id: str) -> Later[dict[str, Any]]:
    return services.graph().user_later(batch, viewer, id_or_404(user_id, "user"))


@router.get(
    "/v1/users/<user_id>",
    summary="A user by id",
    responses=responses(200, UserOut, "The user", e404="not_found"),
)
@reads_first(_user_reads)
def get_user(user_id: Id) -> dict[str, Any]:
    me = principal().user_id
    return views.user(first_reads(_user_reads, me, user_id=user_id), viewer_id=me)
