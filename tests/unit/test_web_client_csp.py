"""The web client's Content-Security-Policy (issue 33 item 7): the one template.yaml has
CloudFront send is the one `make run` sends, and it lets exactly the client's own code run."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from infra.local.template import load_template
from infra.local.web_client import WEB_ROOT, content_security_policy
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

LOCAL = {
    "Api": "http://127.0.0.1:3000",
    "Socket": "ws://127.0.0.1:3001",
    "Uploads": "http://127.0.0.1:4566",
    "Media": "http://127.0.0.1:3003",
}


def _inline_scripts(html: str) -> list[str]:
    return re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)


def test_the_policy_allows_the_import_map_by_its_hash_and_no_other_inline_code():
    html = (WEB_ROOT / "index.html").read_text()
    scripts = _inline_scripts(html)
    assert len(scripts) == 1 and "importmap" in html  # the import map, and only it
    assert "<style" not in html and " style=" not in html
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handler
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = content_security_policy(load_template(ROOT / "template.yaml"), LOCAL)
    assert csp is not None
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    # index.html's import map changed: put its new hash in WebClientResponseHeaders
    assert directives["script-src"] == f"'self' 'sha256-{digest}'"
    assert directives["default-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert directives["connect-src"].split() == [
        "'self'", LOCAL["Api"], LOCAL["Socket"], LOCAL["Uploads"]
    ]  # fmt: skip
    assert directives["img-src"].split() == ["'self'", "data:", "blob:", LOCAL["Media"]]
