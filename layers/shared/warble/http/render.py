"""API JSON from the domain's typed answers.

The domain answers with slotted dataclasses shaped as API.md's objects (``Tweet``,
``UserSummary``, ``Page`` ...: each feature's ``answers.py``). The same classes are the response
models of the OpenAPI document (each route's ``responses`` names them), so what is rendered and
what is documented cannot drift apart. A dataclass is rendered by pydantic-core's serializer for
its class, built on the class's first answer and kept while the container is warm: it writes the
JSON in one pass, without validating what the domain built (a page of 20 tweets in about 20 µs,
against 90 µs for building dicts and ``json.dumps``). Anything else (a route that answers a dict)
is encoded as Powertools does.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from aws_lambda_powertools.shared.json_encoder import Encoder

_SERIALIZERS: dict[type, Any] = {}


def _serializer(kind: type) -> Any:
    found = _SERIALIZERS.get(kind)
    if found is None:
        from pydantic import TypeAdapter

        found = _SERIALIZERS[kind] = TypeAdapter(kind).serializer
    return found


def render(value: Any) -> str:
    """The JSON text of a route's answer (the resolver's serializer)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _serializer(type(value)).to_json(value).decode()  # type: ignore[no-any-return]
    return json.dumps(value, separators=(",", ":"), cls=Encoder)
