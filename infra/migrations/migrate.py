"""MigrateFunction: applies the SQL migrations beside this file to the Aurora database.

infra/deploy.sh invokes it after each deploy. It connects through RDS Proxy with the credentials
from the database secret, exactly as the other functions do.
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
    from warble.dal.migrations import apply_migrations, database_url
    from warble.dal.postgres import credentials
    from warble.settings import get_settings

    settings = get_settings()
    user, password = credentials(settings)
    url = database_url(
        settings.db_host, settings.db_port, settings.db_name, user, password, settings.db_sslmode
    )
    applied = apply_migrations(url, Path(__file__).parent)
    logger.info("migrations applied", extra={"applied": applied})
    return {"applied": applied}
