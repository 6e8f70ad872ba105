"""MigrateFunction: applies the SQL migrations beside this file to the Aurora database, then
sets each database role's password from its secret (DB_ROLE_SECRETS; the roles are migration
0011's, and RDS Proxy signs in as each with that password).

infra/deploy.sh invokes it after each deploy. It connects through RDS Proxy as the master, with
the password of the master's secret (RDS manages and rotates it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # Imported on the invocation rather than at init: yoyo, psycopg and the settings are the
    # whole of this function's work, and its one invocation per deploy needs them all anyway.
    from aws_lambda_powertools.utilities import parameters
    from warble.dal.migrations import apply_migrations, database_url, set_role_passwords
    from warble.dal.postgres import credentials
    from warble.settings import get_settings

    settings = get_settings()
    user, password = credentials(settings)
    url = database_url(
        settings.db_host,
        settings.db_port,
        settings.db_name,
        user,
        password,
        settings.db_sslmode,
        settings.db_sslrootcert,
    )
    applied = apply_migrations(url, Path(__file__).parent)
    logger.info("migrations applied", extra={"applied": applied})
    roles = []
    for arn in filter(None, (a.strip() for a in settings.db_role_secrets.split(","))):
        secret: Any = parameters.get_secret(arn, transform="json", max_age=0)
        roles.append((str(secret["username"]), str(secret["password"])))
    passwords_set = set_role_passwords(url, roles) if roles else []
    logger.info("role passwords set", extra={"roles": passwords_set})
    return {"applied": applied, "roles": passwords_set}
