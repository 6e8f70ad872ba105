"""The settings a running local stack's functions run with, read from template.yaml: what the seed,
the README's Discover walkthrough, the load test's checks and `make chaos` sign in with."""

from __future__ import annotations

import argparse
from urllib.parse import urlparse

_NOT_SETTINGS = ("AWS_LAMBDA_", "LAMBDA_", "_HANDLER", "AWS_EXECUTION_ENV", "AWS_SAM_LOCAL")


def stack_environment(args: argparse.Namespace) -> dict[str, str]:
    """The settings the stack's functions run with (every function's environment merged: table
    names, database, Redis, limits), pointed at the stack's moto server."""
    from infra.local.lambdas import DUMMY_CREDENTIALS, LambdaRuntime, read_env_vars
    from infra.local.moto_server import _port_in_use
    from infra.local.provisioning import provision
    from infra.local.template import ResolveContext, load_template

    endpoint = urlparse(args.endpoint_url)
    # Listening is enough: a busy moto server can take seconds to answer its first request.
    if not _port_in_use(endpoint.hostname or "127.0.0.1", endpoint.port or 80):
        raise SystemExit(
            f"no moto server answers at {args.endpoint_url}: start the stack first (make run),"
            " or give its --endpoint-url (the READY line of serve prints it)"
        )
    template = load_template(args.template)
    context = ResolveContext(stack_name=args.stack_name, region=args.region)
    provision(template, args.endpoint_url, context)  # a running stack's: only looks ARNs up
    runtime = LambdaRuntime(
        template,
        context,
        env_overrides=read_env_vars(args.env_vars),
        extra_env={"AWS_ENDPOINT_URL": args.endpoint_url, **DUMMY_CREDENTIALS},
    )
    try:
        merged: dict[str, str] = {}
        for function in template.functions:
            merged.update(runtime.environment_for(function))
        # The seed writes every table in bulk (COPY), which no function's database role may:
        # it signs in as the schema's owner, as MigrateFunction does.
        if "MigrateFunction" in template.functions:
            owner = runtime.environment_for("MigrateFunction")
            merged.update({k: v for k, v in owner.items() if k.startswith("DB_")})
    finally:
        runtime.close()
    return {k: v for k, v in merged.items() if not k.startswith(_NOT_SETTINGS)}
