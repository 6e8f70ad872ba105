"""The dependencies layer keeps the botocore models of the services the shipped code asks for,
and only those (layers/dependencies/Makefile, BOTOCORE_SERVICES): a client of any other service
would fail on AWS with UnknownServiceError, while the dev venv, which keeps them all, never would.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = (ROOT / "layers" / "shared", ROOT / "functions", ROOT / "infra" / "migrations")

# Clients the code asks for by name: boto3.client("x"), session.create_client("x").
_NAMED = re.compile(r"""\b(?:client|create_client)\(\s*["']([a-z0-9-]+)["']""")
# Clients that libraries make for the code: what the code calls -> the service.
_IMPLIED = {
    r"\bfrom pynamodb\b|\bimport pynamodb\b": "dynamodb",
    r"\bget_secret\(": "secretsmanager",
    r"\bget_parameters?\(": "ssm",
    r"\bAppConfigProvider\b|\bget_app_config\(": "appconfigdata",
    r"\bDynamoDBPersistenceLayer\b": "dynamodb",
    r"\bTracer\(": "xray",
}


def _kept() -> set[str]:
    makefile = (ROOT / "layers" / "dependencies" / "Makefile").read_text()
    found = re.search(r"^BOTOCORE_SERVICES := (.+)$", makefile, re.M)
    assert found, "BOTOCORE_SERVICES is not set in layers/dependencies/Makefile"
    return set(found.group(1).split())


def _asked_for() -> dict[str, set[str]]:
    asked: dict[str, set[str]] = {}
    for root in SHIPPED:
        for source in root.rglob("*.py"):
            text = source.read_text()
            where = str(source.relative_to(ROOT))
            for service in _NAMED.findall(text):
                asked.setdefault(service, set()).add(where)
            for pattern, service in _IMPLIED.items():
                if re.search(pattern, text):
                    asked.setdefault(service, set()).add(where)
    return asked


def test_the_layer_keeps_the_model_of_every_service_the_code_asks_for():
    asked = _asked_for()
    assert {"dynamodb", "secretsmanager", "xray"} <= set(asked)  # the scan finds what we know
    missing = {service: sorted(where) for service, where in asked.items() if service not in _kept()}
    assert missing == {}


def test_the_scan_sees_a_client_asked_for_by_name():
    assert _NAMED.findall('boto3.client("s3", region_name=r); s.create_client(\n "sqs")') == [
        "s3",
        "sqs",
    ]
