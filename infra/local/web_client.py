"""The web client's static host: what S3 behind CloudFront serves on AWS, on a port of its own.

It serves `web/` as it is (no build step) and one generated file, `config.json`, which tells the
client where the HTTP and WebSocket APIs are, under the names of the stack's outputs. On AWS
`infra/publish_web.py` writes the same file from the outputs. The client reaches the APIs
cross-origin, through the CORS configuration of `template.yaml`, as it does on AWS. Every answer
carries the Content-Security-Policy that template.yaml has CloudFront send, with the local
runtime's addresses in place of the stack's (`content_security_policy`), and `nosniff`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from infra.local.http_gateway import _bound_port
from infra.local.template import Template

log = logging.getLogger("infra.local.web")

WEB_ROOT = Path(__file__).resolve().parents[2] / "web"


def content_security_policy(template: Template, addresses: Mapping[str, str]) -> str | None:
    """The Content-Security-Policy of the distribution that serves the web client (the one with
    a DefaultRootObject), its `Fn::Sub` variables named in ``addresses`` (Api, Socket, Uploads,
    Media) given the local runtime's, the others (the import map's hash) as the template has
    them. None when the template sets none."""
    for resource in template.resources.values():
        config = (resource.get("Properties") or {}).get("DistributionConfig") or {}
        if resource.get("Type") != "AWS::CloudFront::Distribution" or not config.get(
            "DefaultRootObject"
        ):
            continue
        policy_ref = (config.get("DefaultCacheBehavior") or {}).get("ResponseHeadersPolicyId")
        if not isinstance(policy_ref, dict) or policy_ref.get("Ref") not in template.resources:
            return None
        props = template.resources[policy_ref["Ref"]].get("Properties") or {}
        security = props["ResponseHeadersPolicyConfig"].get("SecurityHeadersConfig") or {}
        csp = (security.get("ContentSecurityPolicy") or {}).get("ContentSecurityPolicy")
        if csp is None:
            return None
        text, variables = csp["Fn::Sub"] if isinstance(csp, dict) else (csp, {})
        return _substituted(str(text), variables, addresses)
    return None


def _substituted(text: str, variables: Mapping[str, Any], addresses: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in addresses:
            return addresses[name]
        literal = variables.get(name)
        if not isinstance(literal, str):
            raise ValueError(f"the web client's CSP: no local value for ${{{name}}}")
        return literal

    return " ".join(re.sub(r"\$\{([A-Za-z0-9]+)\}", value, text).split())


class WebClientHost:
    def __init__(
        self,
        host: str,
        port: int,
        http_api_url: str,
        websocket_url: str,
        content_security_policy: str | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.config = {"HttpApiUrl": http_api_url, "WebSocketUrl": websocket_url}
        self.csp = content_security_policy
        self._runner: web.AppRunner | None = None
        self.app = web.Application(middlewares=[self._security_headers])
        self.app.router.add_get("/config.json", self._config)
        self.app.router.add_get("/", self._index)
        self.app.router.add_static("/", WEB_ROOT, show_index=False, append_version=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @web.middleware
    async def _security_headers(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[Any]]
    ) -> Any:
        response = await handler(request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if self.csp is not None:
            response.headers["Content-Security-Policy"] = self.csp
        return response

    async def _config(self, request: web.Request) -> web.Response:
        return web.json_response(self.config, headers={"Cache-Control": "no-store"})

    async def _index(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(WEB_ROOT / "index.html", headers={"Cache-Control": "no-cache"})

    async def start(self) -> None:
        """Listen (port 0 picks a free port; `self.port` then holds the real one)."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        self.port = _bound_port(self._runner, self.port)
        log.info("web client on %s (%s)", self.url, json.dumps(self.config))

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
