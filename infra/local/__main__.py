"""Command line of the local runtime: `python -m infra.local serve | invoke | schedule | seed`.

`serve` stands the whole stack up on one machine (moto, tables, secret, buckets, database, Lambda
workers, HTTP API, WebSocket API, stream pollers, schedules, the S3 endpoint and its bucket
notifications, the media CDN, the web client), prints the URLs and a single
`READY http=... ws=... moto=... web=... s3=... media=...` line, and runs until Ctrl-C or SIGTERM.
`invoke` and `schedule` run one function once, like `sam local invoke`; `seed` fills a running
stack with a population (infra/local/seed.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import re
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from infra.local import events as event_builders
from infra.local.cache_users import ensure_cache_users
from infra.local.errors import UnsupportedTemplateError
from infra.local.http_gateway import HttpGateway
from infra.local.lambdas import (
    DEFAULT_ENV_VARS,
    DUMMY_CREDENTIALS,
    InvokeResult,
    LambdaRuntime,
    read_env_vars,
)
from infra.local.seed import add_arguments as add_seed_arguments
from infra.local.template import ResolveContext, Template, load_template
from infra.local.web_client import WebClientHost, content_security_policy
from infra.local.ws_gateway import WebSocketGateway

log = logging.getLogger("infra.local")

SCRATCH_REDIS_INDEX = 15  # `invoke` and `schedule` without a running stack (_scratch_stores)
# The local admins' password (API.md): WARBLE_ADMIN_PASSWORD says another.
LOCAL_ADMIN_PASSWORD = "warble-admin-local"
OPERATOR_FUNCTION = "OperatorFunction"
_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


# --------------------------------------------------------------------------------------------
# Shared set-up
# --------------------------------------------------------------------------------------------


def _declared_value(
    template: Template,
    context: ResolveContext,
    overrides: dict[str, dict[str, Any]],
    name: str,
) -> str | None:
    """A variable's local value for the first function declaring it (overrides applied)."""
    for function_id, spec in template.functions.items():
        if name in spec.environment:
            for section in (function_id, "Parameters"):
                if name in (overrides.get(section) or {}):
                    return str(overrides[section][name])
            value = template.resolve(spec.environment[name], context)
            return None if value is None else str(value)
    return None


@dataclass
class Stack:
    """Everything `serve` started, so it can be stopped in the reverse order."""

    template: Template
    context: ResolveContext
    runtime: LambdaRuntime
    moto: Any = None
    http: HttpGateway | None = None
    ws: WebSocketGateway | None = None
    web: WebClientHost | None = None
    pollers: Any = None
    queues: Any = None
    schedules: list[asyncio.Task[None]] = field(default_factory=list)
    s3: Any = None
    cdns: list[Any] = field(default_factory=list)


def _prepare_services(
    template: Template,
    context: ResolveContext,
    overrides: dict[str, dict[str, Any]],
    moto_url: str,
    with_database: bool,
    *,
    empty: bool = False,
    exclusive: contextlib.ExitStack | None = None,
) -> None:
    """Tables and queues on moto; PostgreSQL and Redis started when stopped, and migrated.
    `empty` first empties the database and the Redis index the template is given: moto's
    tables start empty at every start, and a database or a cache kept from an earlier run would
    hold sessions, counts and timelines of a world that is gone. With `exclusive`, the stores
    stay this run's until that stack closes: another run that would empty them waits (two
    `invoke`s in two terminals take turns instead of dropping each other's database)."""
    from infra.local.daemons import ensure_services
    from infra.local.database import drop_database, holding, prepare_database
    from infra.local.provisioning import provision

    provision(template, moto_url, context)
    if not with_database:
        return
    db_name = _declared_value(template, context, overrides, "DB_NAME")
    redis_url = _declared_value(template, context, overrides, "REDIS_URL")
    if db_name is None and redis_url is None:
        return  # a template without PostgreSQL or Redis (the runtime's own test fixture)
    db_host = _declared_value(template, context, overrides, "DB_HOST") or "127.0.0.1"
    db_port = int(_declared_value(template, context, overrides, "DB_PORT") or 5432)
    redis = urlparse(redis_url or "redis://127.0.0.1:6379")
    ensure_services(
        pg_host=db_host,
        pg_port=db_port,
        redis_host=redis.hostname or "127.0.0.1",
        redis_port=redis.port or 6379,
    )
    if exclusive is not None and db_name:
        exclusive.enter_context(holding(f"warble.scratch:{db_name}", db_host, db_port))
    if redis_url:  # the cache's users exist from the start, as the stack's do once deployed
        cluster = _declared_value(template, context, overrides, "REDIS_CLUSTER")
        ensure_cache_users(template, context, redis_url, (cluster or "").lower() == "true")
    if empty:
        if db_name:
            drop_database(db_name, host=db_host, port=db_port)
        if redis_url:
            _empty_redis(redis_url, _declared_value(template, context, overrides, "REDIS_CLUSTER"))
        log.info("emptied database %s and Redis %s", db_name, redis_url)
    if db_name:
        applied = prepare_database(db_name, host=db_host, port=db_port)
        if applied:
            log.info("database %s: applied migrations %s", db_name, ", ".join(applied))


def _empty_redis(url: str, cluster: str | None) -> None:
    import redis

    if (cluster or "").lower() == "true":
        from redis.cluster import RedisCluster

        with RedisCluster.from_url(url) as nodes:
            nodes.flushall(target_nodes=RedisCluster.PRIMARIES)
        return
    with redis.Redis.from_url(url) as client:
        client.flushdb()


def _scratch_stores(
    template: Template, context: ResolveContext, overrides: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """`invoke` and `schedule` without a running stack: a scratch database (`<name>_invoke`)
    and Redis index (15) beside the throwaway moto, emptied at each run, so a sample event
    (a signup of `alice`, say) answers the same every time and never touches `make run`'s."""
    scratch: dict[str, Any] = {}
    db_name = _declared_value(template, context, overrides, "DB_NAME")
    if db_name:
        scratch["DB_NAME"] = f"{db_name}_invoke"
    redis_url = _declared_value(template, context, overrides, "REDIS_URL")
    if redis_url:
        scratch["REDIS_URL"] = urlparse(redis_url)._replace(path=f"/{SCRATCH_REDIS_INDEX}").geturl()
    parameters = {**(overrides.get("Parameters") or {}), **scratch}
    return {**overrides, "Parameters": parameters}


def schedule_rules(template: Template, context: ResolveContext) -> Iterator[tuple[str, str, Any]]:
    """(function, rule name, resolved event properties) of enabled Schedule / ScheduleV2 events."""
    for function_id, spec in template.functions.items():
        for event_name, event in spec.events.items():
            if event.get("Type") not in ("Schedule", "ScheduleV2"):
                continue
            props = template.resolve(event.get("Properties") or {}, context)
            expression = props.get("Schedule") or props.get("ScheduleExpression")
            enabled = props.get("Enabled", True) and props.get("State", "ENABLED") == "ENABLED"
            if expression and enabled:
                yield function_id, str(props.get("Name") or event_name), props


def scheduled_event_for(context: ResolveContext, rule: str, props: Any) -> dict[str, Any]:
    """The event a schedule delivers: its Input when set, else EventBridge's Scheduled Event."""
    if isinstance(props, dict) and props.get("Input"):
        return json.loads(props["Input"])
    return event_builders.scheduled_event(
        rule, region=context.region, account_id=context.account_id
    )


async def _run_schedule(
    runtime: LambdaRuntime,
    context: ResolveContext,
    function_id: str,
    rule: str,
    props: dict[str, Any],
) -> None:
    expression = str(props.get("Schedule") or props.get("ScheduleExpression"))
    match = _RATE.match(expression.strip())
    if match is None:
        log.info(
            "%s: schedule %r (%s) runs on demand only: python -m infra.local schedule %s"
            " --endpoint-url <moto>",
            function_id, rule, expression, function_id,
        )  # fmt: skip
        return
    period = int(match.group(1)) * _UNIT_SECONDS[match.group(2).rstrip("s")]
    log.info("%s: schedule %s every %d s", function_id, rule, period)
    while True:
        await asyncio.sleep(period)
        event = scheduled_event_for(context, rule, props)
        result = await runtime.ainvoke(function_id, event)
        if not result.ok:
            log.warning("%s: scheduled invocation failed: %s", function_id, result.error)


# --------------------------------------------------------------------------------------------
# serve
# --------------------------------------------------------------------------------------------


async def serve(args: argparse.Namespace) -> int:
    from infra.local.moto_server import start_moto
    from infra.local.queue_pollers import QueuePollers
    from infra.local.stream_pollers import StreamPollers
    from infra.local.stream_wakeups import ENV as WAKEUPS_ENV
    from infra.local.stream_wakeups import StreamWakeups
    from infra.local.support import check_template

    template = load_template(args.template)
    check_template(template)
    context = ResolveContext(stack_name=args.stack_name, region=args.region)
    overrides = read_env_vars(args.env_vars)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    wakeups = StreamWakeups()  # the moto server names each table a stream record lands in
    moto = await asyncio.to_thread(
        functools.partial(start_moto, args.moto_port, extra_env={WAKEUPS_ENV: wakeups.address})
    )
    stack: Stack | None = None
    s3 = None
    cdns: list[Any] = []
    try:
        await asyncio.to_thread(
            functools.partial(_prepare_services, empty=not args.keep_data),
            template, context, overrides, moto.url, not args.no_database,
        )  # fmt: skip
        s3, cdns = await _start_storage(template, context, moto.url, args)
        runtime = LambdaRuntime(
            template,
            context,
            env_overrides=overrides,
            extra_env={
                "AWS_ENDPOINT_URL": moto.url,
                "AWS_ENDPOINT_URL_S3": s3.url,
                **DUMMY_CREDENTIALS,
            },
        )
        runtime.update_env_overrides({"Parameters": _plain_http(template, context, cdns)})
        s3.runtime = runtime
        stack = Stack(template, context, runtime, moto=moto, s3=s3, cdns=cdns)
        stack.schedules.append(asyncio.ensure_future(_run_lifecycle(s3, moto.url, context)))
        stack.http = HttpGateway(template, runtime, context, args.host, args.http_port)
        stack.ws = WebSocketGateway(template, runtime, context, args.host, args.ws_port)
        await stack.http.start()
        await stack.ws.start()
        if stack.ws.spec is not None and not any(
            "WEBSOCKET_CALLBACK_URL" in section for section in overrides.values()
        ):
            # Only now is the port known (it may have been 0): point pushes at this gateway.
            runtime.update_env_overrides(
                {"Parameters": {"WEBSOCKET_CALLBACK_URL": stack.ws.callback_url}}
            )
        stack.pollers = StreamPollers(template, runtime, moto.url, context, wakeups=wakeups)
        await asyncio.to_thread(stack.pollers.start)
        stack.queues = QueuePollers(template, runtime, moto.url, context)
        await asyncio.to_thread(stack.queues.start)
        if not args.no_database:
            await _create_admins(template, context, overrides, runtime)
        if not args.no_schedules:
            for function_id, rule, props in schedule_rules(template, context):
                stack.schedules.append(
                    asyncio.ensure_future(_run_schedule(runtime, context, function_id, rule, props))
                )
        http_url, ws_url = stack.http.url, stack.ws.url
        web_url = "-"
        if args.web_port >= 0:
            media = next((c.url for c in cdns if c.spec.logical_id == "MediaDistribution"), "")
            addresses = {"Api": http_url, "Socket": ws_url, "Media": media,
                         "Uploads": s3.url if s3 is not None else ""}  # fmt: skip
            stack.web = WebClientHost(
                args.host, args.web_port, http_url, ws_url,
                content_security_policy(template, addresses),
            )  # fmt: skip
            await stack.web.start()
            web_url = stack.web.url
            if not any("WEB_CLIENT_URL" in section for section in overrides.values()):
                # The password reset email links to this web client's reset page.
                runtime.update_env_overrides({"Parameters": {"WEB_CLIENT_URL": web_url}})
        print(f"HTTP API       {http_url}", flush=True)
        print(f"WebSocket API  {ws_url}  (@connections: {stack.ws.callback_url})", flush=True)
        print(f"moto endpoint  {moto.url}", flush=True)
        print(
            f"S3 endpoint    {s3.url}  (uploads; AWS_ENDPOINT_URL_S3 of the functions)", flush=True
        )
        for cdn in cdns:
            print(f"Media CDN      {cdn.url}  ({cdn.spec.logical_id})", flush=True)
        if stack.web is not None:
            print(f"Web client     {web_url}", flush=True)
        media_url = cdns[0].url if cdns else "-"
        print(
            f"READY http={http_url} ws={ws_url} moto={moto.url} web={web_url} s3={s3.url}"
            f" media={media_url}",
            flush=True,
        )
        await stop.wait()
        log.info("stopping")
    finally:
        if stack is None:
            for cdn in cdns:
                await cdn.stop()
            if s3 is not None:
                await s3.stop()
        await _shutdown(stack, moto)
        wakeups.close()
    return 0


async def _create_admins(
    template: Template,
    context: ResolveContext,
    overrides: dict[str, dict[str, Any]],
    runtime: LambdaRuntime,
) -> None:
    """Each of ADMIN_USERNAMES' accounts, as the operator creates them on AWS (the API refuses
    to sign them up): through OperatorFunction, with the password of WARBLE_ADMIN_PASSWORD or
    warble-admin-local, and the email <name>@example.com. An account kept from an earlier run
    (--keep-data) is left as it is."""
    import os

    if OPERATOR_FUNCTION not in template.functions:
        return
    names = _declared_value(template, context, overrides, "ADMIN_USERNAMES") or ""
    password = os.environ.get("WARBLE_ADMIN_PASSWORD") or LOCAL_ADMIN_PASSWORD
    for name in (n.strip() for n in names.split(",") if n.strip()):
        event = {"task": "create_admin", "username": name, "email": f"{name}@example.com",
                 "password": password}  # fmt: skip
        result = await runtime.ainvoke(OPERATOR_FUNCTION, event)
        answer = result.payload if result.ok else result.error
        if not result.ok or not isinstance(answer, dict) or "error" in answer:
            log.warning("admin %s not created: %s", name, answer)
        else:
            log.info("admin %s: %s", name, "created" if answer["created"] else "kept")


async def _start_storage(
    template: Template, context: ResolveContext, moto_url: str, args: argparse.Namespace
) -> tuple[Any, list[Any]]:
    """The S3 endpoint and one CDN per distribution (the first on --media-port); each
    distribution's DomainName is then the CDN's host and port."""
    from infra.local.buckets import buckets, distributions
    from infra.local.cdn import CdnHost
    from infra.local.s3_endpoint import S3Endpoint

    s3 = S3Endpoint(template, context, moto_url, args.host, args.s3_port)
    await s3.start()
    names = {spec.logical_id: spec.name for spec in buckets(template, context)}
    cdns = []
    for index, spec in enumerate(distributions(template)):
        port = args.media_port if index == 0 else 0
        cdn = CdnHost(spec, names[spec.bucket], moto_url, context.region, args.host, port)
        await cdn.start()
        context.values.setdefault(spec.logical_id, {}).update(
            {"DomainName": cdn.domain, "Ref": f"LOCAL{spec.logical_id.upper()}"}
        )
        cdns.append(cdn)
    return s3, cdns


def _plain_http(template: Template, context: ResolveContext, cdns: list[Any]) -> dict[str, str]:
    """Variables that name a distribution as https://<its domain>: the local CDN speaks http."""
    found: dict[str, str] = {}
    for spec in template.functions.values():
        for name, raw in spec.environment.items():
            try:
                value = template.resolve(raw, context)
            except Exception:  # a variable the resolver cannot read is left to the worker
                continue
            for cdn in cdns:
                if isinstance(value, str) and f"https://{cdn.domain}" in value:
                    found[name] = value.replace(f"https://{cdn.domain}", cdn.url)
    return found


async def _run_lifecycle(s3: Any, moto_url: str, context: ResolveContext) -> None:
    """The buckets' lifecycle rules, every LIFECYCLE_PERIOD (S3 runs them about daily)."""
    from infra.local.lifecycle import LIFECYCLE_PERIOD, apply_lifecycle
    from infra.local.moto_server import aws_client

    client = aws_client("s3", moto_url, context.region)
    while True:
        await asyncio.sleep(LIFECYCLE_PERIOD)
        for spec in s3.buckets.values():
            expired = await asyncio.to_thread(apply_lifecycle, client, spec)
            if expired:
                log.info("bucket %s: lifecycle expired %d objects", spec.name, len(expired))


async def _shutdown(stack: Stack | None, moto: Any) -> None:
    if stack is not None:
        for task in stack.schedules:
            task.cancel()
        if stack.pollers is not None:
            await asyncio.to_thread(stack.pollers.stop)
        if stack.queues is not None:
            await asyncio.to_thread(stack.queues.stop)
        # The WebSocket gateway first: its connections' $disconnect still needs the runtime.
        if stack.ws is not None:
            await stack.ws.stop()
        if stack.http is not None:
            await stack.http.stop()
        if stack.web is not None:
            await stack.web.stop()
        for cdn in stack.cdns:
            await cdn.stop()
        if stack.s3 is not None:
            await stack.s3.stop()
        stack.runtime.close()
    moto.stop()


# --------------------------------------------------------------------------------------------
# invoke / schedule
# --------------------------------------------------------------------------------------------


def _read_event(path: str | None) -> Any:
    if path is None:
        return {}
    if path == "-":
        return json.load(sys.stdin)
    return json.loads(Path(path).read_text(encoding="utf-8"))


def invoke_once(args: argparse.Namespace, event: Any) -> InvokeResult:
    """Run one function once against a moto endpoint (a throwaway one when none is given)."""
    from infra.local.moto_server import start_moto
    from infra.local.provisioning import provision
    from infra.local.support import check_template

    template = load_template(args.template)
    check_template(template)
    context = ResolveContext(stack_name=args.stack_name, region=args.region)
    if args.function not in template.functions:
        raise SystemExit(
            f"unknown function {args.function!r}; the template has {sorted(template.functions)}"
        )
    overrides = read_env_vars(args.env_vars)
    with contextlib.ExitStack() as cleanup:
        endpoint = args.endpoint_url
        if endpoint is None:
            moto = start_moto(0)
            cleanup.callback(moto.stop)
            endpoint = moto.url
            overrides = _scratch_stores(template, context, overrides)
            _prepare_services(
                template, context, overrides, endpoint, True, empty=True, exclusive=cleanup
            )
        else:
            # Idempotent: against a running stack it only looks the names and ARNs up.
            provision(template, endpoint, context)
        runtime = LambdaRuntime(
            template,
            context,
            env_overrides=overrides,
            extra_env={"AWS_ENDPOINT_URL": endpoint, **DUMMY_CREDENTIALS},
        )
        cleanup.callback(runtime.close)
        return runtime.invoke(args.function, event)


def _print_result(result: InvokeResult) -> int:
    if result.ok:
        print(json.dumps(result.payload, indent=2))
        return 0
    print(json.dumps(result.error, indent=2))
    return 1


def cmd_invoke(args: argparse.Namespace) -> int:
    return _print_result(invoke_once(args, _read_event(args.event)))


def cmd_schedule(args: argparse.Namespace) -> int:
    template = load_template(args.template)
    context = ResolveContext(stack_name=args.stack_name, region=args.region)
    rules = [r for r in schedule_rules(template, context) if r[0] == args.function]
    if rules:
        _, rule, props = rules[0]
        event = scheduled_event_for(context, rule, props)
    else:
        event = event_builders.scheduled_event(
            f"{args.stack_name}-{args.function}",
            region=context.region,
            account_id=context.account_id,
        )
    return _print_result(invoke_once(args, event))


# --------------------------------------------------------------------------------------------
# argument parsing
# --------------------------------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--template", default="template.yaml", help="SAM template")
    parser.add_argument(
        "--env-vars",
        default=None,
        help=f"SAM --env-vars style JSON (default: {DEFAULT_ENV_VARS} when it exists). "
        "Like sam local, only variables the template declares are overridden.",
    )
    parser.add_argument("--stack-name", default="warble-local")
    parser.add_argument("--region", default="us-east-1")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m infra.local", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    commands = parser.add_subparsers(dest="command", required=True)

    serve_p = commands.add_parser("serve", help="run the whole stack until Ctrl-C")
    _common(serve_p)
    serve_p.add_argument("--host", default="127.0.0.1")
    serve_p.add_argument("--http-port", type=int, default=3000, help="0 picks a free port")
    serve_p.add_argument("--ws-port", type=int, default=3001, help="0 picks a free port")
    serve_p.add_argument("--moto-port", type=int, default=5005, help="0 picks a free port")
    serve_p.add_argument(
        "--web-port", type=int, default=3002, help="web client; 0 picks a free port, -1 serves none"
    )
    serve_p.add_argument(
        "--s3-port", type=int, default=3003, help="S3 endpoint (uploads); 0 picks a free port"
    )
    serve_p.add_argument(
        "--media-port", type=int, default=3004, help="media CDN; 0 picks a free port"
    )
    serve_p.add_argument(
        "--no-database", action="store_true", help="skip PostgreSQL/Redis checks and migrations"
    )
    serve_p.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the PostgreSQL database and the Redis index of an earlier run (by default "
        "every start empties them, as moto's tables start empty)",
    )
    serve_p.add_argument(
        "--no-schedules", action="store_true", help="do not run Schedule events on their rate"
    )

    invoke_p = commands.add_parser("invoke", help="invoke one function once")
    _common(invoke_p)
    invoke_p.add_argument("function", help="logical id, e.g. MetaFunction")
    invoke_p.add_argument("--event", "-e", default=None, help="event JSON file ('-' = stdin)")
    invoke_p.add_argument(
        "--endpoint-url", default=None, help="moto endpoint of a running stack (else throwaway)"
    )

    schedule_p = commands.add_parser("schedule", help="invoke with a scheduled event")
    _common(schedule_p)
    schedule_p.add_argument("function", help="logical id")
    schedule_p.add_argument("--endpoint-url", default=None)

    seed_p = commands.add_parser(
        "seed", help="fill the running stack with a population (infra/local/seed.py)"
    )
    _common(seed_p)
    add_seed_arguments(seed_p)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # One line per boto3/moto request would drown the useful log.
    for noisy in ("botocore", "boto3", "urllib3", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        if args.command == "serve":
            return asyncio.run(serve(args))
        if args.command == "invoke":
            return cmd_invoke(args)
        if args.command == "seed":
            from infra.local.seed import run as seed

            return seed(args)
        return cmd_schedule(args)
    except UnsupportedTemplateError as exc:
        # Refused before anything started: the message names every resource and property.
        print(f"{args.template}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
