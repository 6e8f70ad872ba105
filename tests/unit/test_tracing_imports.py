"""With tracing on, as on AWS, a function's cold start imports only the store libraries its
requests use: the skeleton's Tracer patches nothing, each store instruments its own client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE_LIBRARIES = ("psycopg", "pynamodb", "sqlite3", "botocore.client")

_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import app
from aws_lambda_powertools import Tracer
loaded = [name for name in sys.argv[3:] if name in sys.modules]
print(json.dumps({"tracing": not Tracer().disabled, "loaded": loaded}))
"""


def _import_in_lambda(function: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_TRACE", "AWS_"))}
    env["LAMBDA_TASK_ROOT"] = str(ROOT / "functions" / function)  # what makes Powertools trace
    env["AWS_REGION"] = "us-east-1"
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT / "functions" / function),
         str(ROOT / "layers" / "shared"), *STORE_LIBRARIES],
        capture_output=True, text=True, env=env, cwd=ROOT / "functions" / function, check=True,
        timeout=60,
    )  # fmt: skip
    answer: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


@pytest.mark.parametrize(
    ("function", "loaded"),
    [
        ("meta", []),  # its routes read no store
        ("fanout", []),  # a stream consumer: no deadline, a table's decoder with its first record
        ("tweets", []),  # the gate's Redis only: a cached home page needs no more
        ("accounts", []),  # profile reads come from the caches; logins are rare beside them
        ("graph", ["pynamodb", "botocore.client"]),  # its first read is a DynamoDB call
        ("search", ["psycopg", "pynamodb", "botocore.client"]),  # candidates, hashtag pages
    ],
)
def test_a_traced_cold_start_loads_the_store_libraries_its_function_names(function, loaded):
    """The init loads what the function's requests read whatever the cache holds
    (``warble.dal.prepare``), so a first request does not import it under its deadline; the
    Tracer patches nothing on its own."""
    answer = _import_in_lambda(function)
    assert answer["tracing"] is True
    assert answer["loaded"] == loaded


_BIND = """
import json, sys
sys.path[:0] = [sys.argv[1]]
from pynamodb.attributes import UnicodeAttribute
from pynamodb.models import Model
from aws_xray_sdk.core import patcher
from warble.dal.dynamo import bind

class Item(Model):
    class Meta:
        table_name = "table"

    pk = UnicodeAttribute(hash_key=True)

before = sorted(patcher._PATCHED_MODULES)
bind("us-east-1", [(Item, "table")])
print(json.dumps({"before": before, "after": sorted(patcher._PATCHED_MODULES)}))
"""


def test_a_store_instruments_its_client_when_it_builds_it():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_TRACE", "AWS_"))}
    env["LAMBDA_TASK_ROOT"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", _BIND, str(ROOT / "layers" / "shared")],
        capture_output=True, text=True, env=env, check=True, timeout=60,
    )  # fmt: skip
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer == {"before": [], "after": ["botocore", "pynamodb"]}


_PSYCOPG = """
import json, sys
sys.path[:0] = [sys.argv[1]]
from warble.tracing import instrument
instrument("psycopg")
import psycopg
print(json.dumps({"connect": type(psycopg.connect).__name__}))
"""


def test_a_traced_function_can_instrument_psycopg_without_its_pool_package():
    """The X-Ray SDK's psycopg patch needs psycopg_pool, which the layer does not ship; traced
    as on AWS, the first PostgreSQL connection must still open (traced)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_TRACE", "AWS_"))}
    env["LAMBDA_TASK_ROOT"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", _PSYCOPG, str(ROOT / "layers" / "shared")],
        capture_output=True, text=True, env=env, check=True, timeout=60,
    )  # fmt: skip
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"connect": "FunctionWrapper"}
