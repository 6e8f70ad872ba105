"""Reports and moderators' cases routes (API.md "Reports and moderation")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from warble import services
from warble.domain.reports.answers import Case, CasePage, Report, ReportPage
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit
from warble.ids import parse_id
from warble.schemas.reports import ReportIn, ResolveIn

router = Router()


@router.post(
    "/v1/reports",
    summary="Report a user, a tweet or a message to the moderators (the reported person is "
    "never told)",
    description="At most 20 new reports per reporter an hour (429 rate_limited). Reporting "
    "oneself or what one wrote is a 400; an unknown target, or a message of a conversation "
    "the reporter is not in, a 404.",
    responses={
        **responses(201, Report, "Reported", e404="not_found", e429="rate_limited"),
        200: {
            "description": "My open report of the same target, as it was",
            "content": {"application/json": {"model": Report}},
        },
    },
)
def post_report(body: Annotated[ReportIn, Body()]) -> Response[Any]:
    report, made = services.reports().report(
        principal().user_id, body.target_type, parse_id(body.target_id), body.reason, body.comment
    )
    return Response(status_code=201 if made else 200, content_type="application/json", body=report)


@router.get(
    "/v1/reports",
    summary="My reports, newest first",
    responses=responses(200, ReportPage, "A page of my reports"),
)
def my_reports(limit: Limit = 20, cursor: Cursor = None) -> ReportPage:
    return services.reports().mine(principal().user_id, limit, cursor)


@router.get(
    "/v1/admin/cases",
    summary="Moderators' cases: open ones with the most distinct reporters first, then the "
    "oldest; closed ones newest first (moderators only)",
    responses=responses(200, CasePage, "A page of cases", e403="forbidden"),
)
def cases(
    status: Annotated[Literal["open", "closed"], Query(description="open or closed")] = "open",
    limit: Limit = 20,
    cursor: Cursor = None,
) -> CasePage:
    return services.reports().cases(principal().user_id, status, limit, cursor)


@router.post(
    "/v1/admin/cases/<case_id>/resolve",
    summary="Resolve an open case: dismiss, remove (a tweet or message) or suspend (moderators "
    "only)",
    responses=responses(
        200, Case, "The closed case", e403="forbidden", e404="not_found", e409="conflict"
    ),
)
def resolve(case_id: Id, body: Annotated[ResolveIn, Body()]) -> Case:
    return services.reports().resolve(
        principal().user_id, parse_id(case_id), body.action, body.note
    )
