"""Discover, people nearby (API.md "Discover")."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    ConfigDict,
    Field,
    field_validator,
)

from warble.ids import SNOWFLAKE_PATTERN
from warble.schemas.base import _Request


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
