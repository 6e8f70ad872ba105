"""The follow graph (API.md "Follow graph"): the page of Users its likers list still documents
(the graph's own answers are the domain's dataclasses, ``warble.domain.graph.ports``)."""

from __future__ import annotations

from pydantic import Field

from warble.schemas.accounts import UserOut
from warble.schemas.base import _Model


class UserPageOut(_Model):
    items: list[UserOut]
    next_cursor: str | None = Field(description="Opaque; null when there is nothing more")
