"""The web client's static host: what S3 behind CloudFront serves on AWS, on a port of its own.

It serves `web/` as it is (no build step) and one generated file, `config.json`, which tells the
client where the HTTP and WebSocket APIs are, under the names of the stack's outputs. On AWS
`infra/publish_web.py` writes the same file from the outputs. The client reaches the APIs
cross-origin, through the CORS configuration of `template.yaml`, as it does on AWS.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from aiohttp import web

from infra.local.http_gateway import _bound_port

log = logging.getLogger("infra.local.web")

WEB_ROOT = Path(__file__).resolve().parents[2] / "web"


class WebClientHost:
    def __init__(self, host: str, port: int, http_api_url: str, websocket_url: str) -> None:
        self.host = host
        self.port = port
        self.config = {"HttpApiUrl": http_api_url, "WebSocketUrl": websocket_url}
        self._runner: web.AppRunner | None = None
        self.app = web.Application()
        self.app.router.add_get("/config.json", self._config)
        self.app.router.add_get("/", self._index)
        self.app.router.add_static("/", WEB_ROOT, show_index=False, append_version=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

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
