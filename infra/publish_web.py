"""Publish the web client (`web/`) to the stack's S3 bucket behind CloudFront.

    python infra/publish_web.py [--config-env ENV]      (infra/deploy.sh runs it after a deploy)

It reads the stack's outputs (the stack named by samconfig.toml's config env), uploads every file
of `web/` with its content type, writes `config.json` naming the stack's `HttpApiUrl` and
`WebSocketUrl` (what the local runtime generates for `make run`), and invalidates the
distribution's cache. Needs only boto3, so it runs in the SAM CLI's environment as in the
project's. A stack deployed with `DeployWebClient=false` has no bucket: nothing is published.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

WEB_ROOT = Path(__file__).resolve().parents[1] / "web"
# The files change on every publish but keep their names (no build step, no hashed names): a
# short browser cache, the page itself always revalidated, config.json never cached.
CACHE_CONTROL = {"index.html": "no-cache", "config.json": "no-store"}
DEFAULT_CACHE_CONTROL = "public, max-age=300"
CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                 ".html": "text/html; charset=utf-8", ".json": "application/json"}  # fmt: skip


# What only the browser tests use (they inject axe-core into each screen): never published.
TESTS_ONLY = frozenset({"vendor/axe.min.js", "vendor/LICENSE-axe-core"})


def files_to_publish(root: Path = WEB_ROOT) -> list[tuple[str, Path]]:
    """(key, path) of what the client needs: everything under `web/` but notes for developers
    and what only the tests use."""
    return [
        (key, path)
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and path.suffix != ".md"
        and not path.name.startswith(".")
        and (key := path.relative_to(root).as_posix()) not in TESTS_ONLY
    ]


def content_type(path: Path) -> str:
    return CONTENT_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "text/plain"


def publish(
    s3: Any,
    cloudfront: Any,
    *,
    bucket: str,
    distribution_id: str | None,
    http_api_url: str,
    websocket_url: str,
    root: Path = WEB_ROOT,
) -> list[str]:
    """Upload the client and its config.json; invalidate the distribution. Returns the keys."""
    keys = []
    for key, path in files_to_publish(root):
        s3.put_object(
            Bucket=bucket,
            Key=key,
            Body=path.read_bytes(),
            ContentType=content_type(path),
            CacheControl=CACHE_CONTROL.get(key, DEFAULT_CACHE_CONTROL),
        )
        keys.append(key)
    config = {"HttpApiUrl": http_api_url, "WebSocketUrl": websocket_url}
    s3.put_object(
        Bucket=bucket,
        Key="config.json",
        Body=json.dumps(config).encode(),
        ContentType="application/json",
        CacheControl=CACHE_CONTROL["config.json"],
    )
    keys.append("config.json")
    if distribution_id:
        cloudfront.create_invalidation(
            DistributionId=distribution_id,
            InvalidationBatch={
                "Paths": {"Quantity": 1, "Items": ["/*"]},
                "CallerReference": f"publish-web-{time.time_ns()}",
            },
        )
    return keys


def _stack_settings(config_env: str) -> dict[str, Any]:
    with open("samconfig.toml", "rb") as fh:
        config = tomllib.load(fh).get(config_env, {})
    return {
        **config.get("global", {}).get("parameters", {}),
        **config.get("deploy", {}).get("parameters", {}),
    }


def main(argv: list[str] | None = None) -> int:
    import boto3

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config-env", default="default", help="samconfig.toml environment")
    args = parser.parse_args(argv)
    params = _stack_settings(args.config_env)
    stack_name = params.get("stack_name")
    if not stack_name:
        sys.exit(f"no stack_name in samconfig.toml for config env {args.config_env!r}")
    session = boto3.Session(profile_name=params.get("profile"), region_name=params.get("region"))
    stack = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
    if "WebClientBucketName" not in outputs:
        print(f"stack {stack_name} hosts no web client (DeployWebClient=false): nothing published")
        return 0
    keys = publish(
        session.client("s3"),
        session.client("cloudfront"),
        bucket=outputs["WebClientBucketName"],
        distribution_id=outputs.get("WebClientDistributionId"),
        http_api_url=outputs["HttpApiUrl"],
        websocket_url=outputs["WebSocketUrl"],
    )
    print(f"published {len(keys)} files of the web client: {outputs.get('WebClientUrl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
