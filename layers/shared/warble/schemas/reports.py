"""Reports' and cases' requests (API.md "Reports and moderation"). The enumerations and the
lengths are the service's rules too (``warble.domain.reports``), so the unit tier holds them
without HTTP; the models give the OpenAPI document their shapes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from warble.ids import SNOWFLAKE_PATTERN
from warble.schemas.base import _Request

TargetType = Literal["user", "tweet", "message"]
Reason = Literal[
    "spam", "abuse", "hate", "violence", "sexual", "self_harm", "impersonation", "other"
]


class ReportIn(_Request):
    target_type: TargetType
    target_id: str = Field(
        pattern=SNOWFLAKE_PATTERN, description="the reported user, tweet or message"
    )
    reason: Reason
    comment: str | None = Field(
        default=None, max_length=1000, description="at most 1000 characters"
    )


class ResolveIn(_Request):
    action: Literal["dismiss", "remove", "suspend"] = Field(
        description="`dismiss` the reports, `remove` the tweet or message (not a user), or "
        "`suspend` the subject"
    )
    note: str | None = Field(default=None, max_length=1000, description="for the moderators")
