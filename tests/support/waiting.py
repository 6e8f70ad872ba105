"""Waiting on a condition, never on a sleep of a guessed length, and the local runtime's fault
switch as a fixture's body (the integration tier's moto and an e2e stack's share its API)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from infra.local.faults import FAULTS_PATH


def eventually(check: Callable[[], Any], what: str, within: float, every: float = 0.05) -> Any:
    """``check()``'s first truthy answer; the test fails when none comes ``within`` seconds."""
    deadline = time.monotonic() + within
    while not (found := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {within} s")
        time.sleep(every)
    return found


def fault_switch(moto_url: str) -> Iterator[Callable[..., dict[str, Any]]]:
    """Sets the moto server's fault switch (PUT); switched off after the test, whatever
    happened (DELETE). A fixture yields from it."""

    def switch(**setting: Any) -> dict[str, Any]:
        answer = httpx.put(f"{moto_url}{FAULTS_PATH}", json=setting, timeout=10)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    yield switch
    httpx.delete(f"{moto_url}{FAULTS_PATH}", timeout=10).raise_for_status()
