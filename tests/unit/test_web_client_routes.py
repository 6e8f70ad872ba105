"""The web client calls only the public HTTP API: every request its code makes (method and path)
is a route of template.yaml, as any client app's would be."""

from __future__ import annotations

import re

import pytest

from infra.local.template import load_template
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

SOURCES = sorted((ROOT / "web" / "src").glob("*.js"))
HELPER = re.compile(r"\b(?:this|api)\.(get|post|put|patch|del)\(\s*[`\"](/v1/[^`\"]*)[`\"]")
REQUEST = re.compile(r"request\(\s*\"(GET|POST|PUT|PATCH|DELETE)\",\s*[`\"](/v1/[^`\"]*)[`\"]")
METHODS = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "del": "DELETE"}


def client_calls() -> list[tuple[str, str]]:
    calls = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        found = [(METHODS[m], p) for m, p in HELPER.findall(text)] + REQUEST.findall(text)
        # Every API path written in the code is in a call this test reads.
        assert len(found) == text.count('"/v1/') + text.count("`/v1/"), source.name
        calls += found
    return calls


def template_routes() -> list[tuple[str, list[str]]]:
    template = load_template(ROOT / "template.yaml")
    routes = []
    for resource in template.raw["Resources"].values():
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            props = event.get("Properties", {})
            if event.get("Type") == "HttpApi" and "Path" in props:
                routes.append((props["Method"].upper(), props["Path"].split("/")))
    return routes


def matches(path: str, pattern: list[str]) -> bool:
    segments = path.split("/")
    return len(segments) == len(pattern) and all(
        seg == pat or (pat.startswith("{") and seg.startswith("${") and seg.endswith("}"))
        for seg, pat in zip(segments, pattern, strict=True)
    )


def test_every_call_of_the_web_client_is_a_template_route() -> None:
    calls = client_calls()
    assert len(calls) > 30  # the whole API.md surface, so the reading above found them
    routes = template_routes()
    unknown = [
        (method, path)
        for method, path in calls
        if not any(method == m and matches(path, pattern) for m, pattern in routes)
    ]
    assert unknown == []


def test_a_path_outside_the_template_is_caught() -> None:
    routes = template_routes()
    assert any(m == "GET" and matches("/v1/users/${id}/tweets", p) for m, p in routes)
    assert not any(matches("/v1/users/${id}/private", p) for _, p in routes)
    assert not any(m == "DELETE" and matches("/v1/timeline/home", p) for m, p in routes)
