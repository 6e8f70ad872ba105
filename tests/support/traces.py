"""What any store still holds of an account: every DynamoDB item, Redis key and PostgreSQL row
that names its id (or one of its tweets' ids), for the deletion tests (API.md "Deleting an
account": nothing of it stays).

A scan of everything, so only for test-sized stores. An id is looked for in every key and value,
in its plain and its 19-digit zero-padded spelling (``_names``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import boto3

# Items that name no user: the counter consumer's dedupe claims (an event id each).
_NOT_USER_DATA = ("CLAIM#",)


_NUMBERS = re.compile(r"\d{12,}")


def _names(text: str, wanted: set[int]) -> bool:
    """Whether ``text`` holds one of the ids, as a number of its own or zero-padded (every run
    of digits is read as numbers: ids stand apart, or follow each other in a padded key)."""
    for run in _NUMBERS.findall(text):
        if int(run) in wanted or any(int(run[i : i + 19]) in wanted
                                     for i in range(0, len(run) - 18, 19)):  # fmt: skip
            return True
    return False


def dynamo_traces(
    tables: Iterable[str], ids: Iterable[int], endpoint: str | None = None
) -> list[str]:
    """``table: item`` of every item naming one of ``ids``."""
    client = boto3.client("dynamodb", endpoint_url=endpoint)
    wanted = set(ids)
    found = []
    for table in tables:
        for page in client.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                text = json.dumps(item, sort_keys=True)
                if any(str(v.get("S", "")).startswith(_NOT_USER_DATA) for v in item.values()):
                    continue
                if _names(text, wanted):
                    found.append(f"{table}: {text[:300]}")
    return found


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return " ".join(f"{_text(k)}={_text(v)}" for k, v in value.items())
    if isinstance(value, list | set | tuple):
        return " ".join(_text(v) for v in value)
    return str(value)


def redis_traces(client: Any, ids: Iterable[int]) -> list[str]:
    """``key`` of every key whose name or content names one of ``ids`` (a client that does not
    decode: bitmaps are bytes)."""
    wanted = set(ids)
    found = []
    for key in client.scan_iter(count=1000):
        kind = _text(client.type(key))
        if kind == "string":
            content: Any = client.get(key)
        elif kind == "hash":
            content = client.hgetall(key)
        elif kind == "zset":
            content = client.zrange(key, 0, -1)
        elif kind == "set":
            content = list(client.smembers(key))
        elif kind == "list":
            content = client.lrange(key, 0, -1)
        else:
            content = ""
        text = f"{_text(key)} {_text(content)}"
        if _names(text, wanted):
            found.append(text[:300])
    return found


def postgres_traces(conn: Any, user_id: int) -> list[str]:
    """Rows of users, sessions and the search index naming the account (its deleted_accounts
    row is the one trace kept: an id and two times)."""
    found = []
    for table, column in (("users", "id"), ("sessions", "user_id"), ("search_prefixes", "user_id")):
        count = conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = %s", (user_id,))
        if count.fetchone()[0]:
            found.append(table)
    return found


def s3_traces(bucket: str, keys: Iterable[str], endpoint: str | None = None) -> list[str]:
    client = boto3.client("s3", endpoint_url=endpoint)
    found = []
    for key in keys:
        listed = client.list_objects_v2(Bucket=bucket, Prefix=key)
        found += [o["Key"] for o in listed.get("Contents", [])]
    return found
