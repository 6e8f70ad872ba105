"""The unit tier runs with the network switched off.

Every connect (``socket.socket.connect`` / ``connect_ex``, ``socket.create_connection``) raises,
for the whole of each test module (its module fixtures included), so a unit test that reaches
for PostgreSQL, Redis, moto or anything else fails loudly instead of quietly passing on a
developer's machine where those happen to run. The rules are tested with the in-memory fakes
of ``tests/unit/fakes.py``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.fakes import World


class NetworkDisabled(RuntimeError):
    """A unit test tried to open a connection."""


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise NetworkDisabled(f"the unit tier has no network (connect to {args[1:2] or args[:1]})")


@pytest.fixture(scope="module", autouse=True)
def no_network() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _refuse)
        patch.setattr(socket.socket, "connect_ex", _refuse)
        patch.setattr(socket, "create_connection", _refuse)
        yield


@pytest.fixture
def world() -> World:
    """Fresh services on fresh in-memory stores."""
    return World()
