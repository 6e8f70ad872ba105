"""The local moto server's patches (infra/local/moto_patches.py): a Query reads its partition
only, with the same answers as a scan of the table would give, and import-mode batch writes
leave no stream records."""

from __future__ import annotations

import uuid

import boto3
import pytest

from infra.local.moto_patches import IMPORT_HEADER


@pytest.fixture
def dynamodb(moto):
    return boto3.client("dynamodb", endpoint_url=moto.url, region_name="us-east-1")


def _n(value: int) -> dict:
    return {"N": str(value)}


def test_queries_of_the_table_its_local_and_global_indexes_answer_as_dynamodb(moto, dynamodb):
    # given tweets of three authors, replies across partitions, and conversations of two users
    tweets = moto.values["TweetsTable"]["Ref"]
    base = uuid.uuid4().int % 10**12 * 1000
    authors = [base + 1, base + 2, base + 3]
    for n in range(30):
        item = {"author_id": _n(authors[n % 3]), "tweet_id": _n(base + 100 + n),
                "created_at_ms": _n(n), "text": {"S": "t"}}  # fmt: skip
        if n >= 3:
            item["reply_to"] = _n(base + 100)  # every later tweet replies to the first
        dynamodb.put_item(TableName=tweets, Item=item)
    conversations = moto.values["ConversationsTable"]["Ref"]
    for user in ("U#a" + str(base), "U#b" + str(base)):
        for n in range(5):
            dynamodb.put_item(
                TableName=conversations,
                Item={"pk": {"S": user}, "sk": {"S": f"C#{n}"}, "last_id": _n(10 - n)},
            )

    # when each is queried
    def ids(**query) -> list[str]:
        items = dynamodb.query(**query)["Items"]
        return [next(iter(item.get("tweet_id", item.get("sk")).values())) for item in items]

    by_author = ids(TableName=tweets, KeyConditionExpression="author_id = :a",
                    ExpressionAttributeValues={":a": _n(authors[1])},
                    ScanIndexForward=False)  # fmt: skip
    replies = ids(TableName=tweets, IndexName="replies", KeyConditionExpression="reply_to = :t",
                  ExpressionAttributeValues={":t": _n(base + 100)})  # fmt: skip
    activity = ids(TableName=conversations, IndexName="activity",
                   KeyConditionExpression="pk = :p AND last_id > :l",
                   ExpressionAttributeValues={":p": {"S": f"U#b{base}"}, ":l": _n(6)})  # fmt: skip

    # then each answers its own partition, in order
    assert by_author == [str(base + 100 + n) for n in range(28, -1, -3)]
    assert replies == [str(base + 100 + n) for n in range(3, 30)]
    assert activity == ["C#3", "C#2", "C#1", "C#0"]


def test_an_import_batch_leaves_no_stream_record_and_a_plain_one_does(moto, dynamodb):
    # given the likes table's stream, read from its end
    table = moto.values["LikesTable"]["Ref"]
    streams = boto3.client("dynamodbstreams", endpoint_url=moto.url, region_name="us-east-1")
    arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")
    imported, plain = f"U#i{uuid.uuid4().hex}", f"U#p{uuid.uuid4().hex}"

    # when one batch is written in import mode and one without it
    importing = boto3.client("dynamodb", endpoint_url=moto.url, region_name="us-east-1")
    importing.meta.events.register(
        "before-sign.dynamodb.BatchWriteItem",
        lambda request, **_: request.headers.__setitem__(IMPORT_HEADER, "1"),
    )
    for client, pk in ((importing, imported), (dynamodb, plain)):
        client.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": "x"}}}}]}
        )

    # then both items are stored, and only the plain one is in the stream
    for pk in (imported, plain):
        key = {"pk": {"S": pk}, "sk": {"S": "x"}}
        assert "Item" in dynamodb.get_item(TableName=table, Key=key)
    records = streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == [plain]


def _pages(dynamodb, **query) -> list[list[str]]:
    pages, start = [], None
    while True:
        answer = dynamodb.query(**query, **({"ExclusiveStartKey": start} if start else {}))
        pages.append([next(iter(item["sk"].values())) for item in answer["Items"]])
        start = answer.get("LastEvaluatedKey")
        if start is None:
            return pages


@pytest.mark.parametrize("forward", [True, False], ids=["forward", "backward"])
def test_a_partitions_pages_answer_as_dynamodb_in_both_directions(moto, dynamodb, forward):
    # given a partition of 50 items with string sort keys (and a neighbour partition)
    table = moto.values["LikesTable"]["Ref"]
    pk = f"U#w{uuid.uuid4().hex}"
    keys = [f"T#{n:03d}" for n in range(50)]
    for key in keys:
        odd = {"BOOL": int(key[2:]) % 2 == 1}
        dynamodb.put_item(TableName=table, Item={"pk": {"S": pk}, "sk": {"S": key}, "odd": odd})
    dynamodb.put_item(TableName=table, Item={"pk": {"S": pk + "x"}, "sk": {"S": "T#010"}})
    ordered = keys if forward else keys[::-1]
    base = {"TableName": table, "ScanIndexForward": forward, "Limit": 7}

    def where(condition: str, **values) -> dict:
        return base | {"KeyConditionExpression": "pk = :p" + condition,
                       "ExpressionAttributeValues": {":p": {"S": pk}} | {
                           name: {"S": value} for name, value in values.items()}}  # fmt: skip

    def flat(pages: list[list[str]]) -> list[str]:
        return [key for page in pages for key in page]

    # when it is read in pages of 7, whole and under each kind of key condition
    whole = _pages(dynamodb, **where(""))
    below = flat(_pages(dynamodb, **where(" AND sk < :s", **{":s": "T#020"})))
    at_most = flat(_pages(dynamodb, **where(" AND sk <= :s", **{":s": "T#020"})))
    above = flat(_pages(dynamodb, **where(" AND sk > :s", **{":s": "T#040"})))
    bounds = {":a": "T#013", ":b": "T#029"}
    between = flat(_pages(dynamodb, **where(" AND sk BETWEEN :a AND :b", **bounds)))
    prefix = flat(_pages(dynamodb, **where(" AND begins_with(sk, :s)", **{":s": "T#03"})))
    odd_only = {":p": {"S": pk}, ":o": {"BOOL": True}}
    filtered = _pages(
        dynamodb,
        **where("") | {"FilterExpression": "odd = :o", "ExpressionAttributeValues": odd_only},
    )

    # then each answers the same keys, in order, in pages of at most 7, as DynamoDB would
    assert [len(page) for page in whole] == [7] * 7 + [1]
    assert flat(whole) == ordered
    assert below == [key for key in ordered if key < "T#020"]
    assert at_most == [key for key in ordered if key <= "T#020"]
    assert above == [key for key in ordered if key > "T#040"]
    assert between == [key for key in ordered if "T#013" <= key <= "T#029"]
    assert prefix == [key for key in ordered if key.startswith("T#03")]
    # a filter applies after the Limit, so its pages follow the unfiltered ones
    assert [len(page) for page in filtered] == [sum(int(k[2:]) % 2 for k in page) for page in whole]
    assert flat(filtered) == [key for key in ordered if int(key[2:]) % 2 == 1]


def test_a_numeric_sort_key_pages_and_counts_by_number(moto, dynamodb):
    # given an author's tweets whose ids differ in length (10 sorts after 9 by number)
    tweets = moto.values["TweetsTable"]["Ref"]
    author = uuid.uuid4().int % 10**12
    ids = [7, 8, 9, 10, 11, 95, 100, 1000, 10_000]
    for tweet_id in ids:
        item = {"author_id": _n(author), "tweet_id": _n(tweet_id)}
        dynamodb.put_item(TableName=tweets, Item=item)

    # when they are paged newest first, and counted above 9
    query = {"TableName": tweets, "KeyConditionExpression": "author_id = :a",
             "ExpressionAttributeValues": {":a": _n(author)}}  # fmt: skip
    pages, start = [], None
    while True:
        answer = dynamodb.query(**query, ScanIndexForward=False, Limit=2,
                                **({"ExclusiveStartKey": start} if start else {}))  # fmt: skip
        pages.append([int(item["tweet_id"]["N"]) for item in answer["Items"]])
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break
    counted = dynamodb.query(**query | {
        "KeyConditionExpression": "author_id = :a AND tweet_id > :t",
        "ExpressionAttributeValues": {":a": _n(author), ":t": _n(9)}}, Select="COUNT")  # fmt: skip
    limited = dynamodb.query(**query, Select="COUNT", Limit=4)

    # then the order is by number, and the counts are of the items without answering them
    assert [tweet_id for page in pages for tweet_id in page] == sorted(ids, reverse=True)
    assert [len(page) for page in pages] == [2, 2, 2, 2, 1]
    assert (counted["Count"], "Items" in counted) == (6, False)
    assert (limited["Count"], "LastEvaluatedKey" in limited) == (4, True)


@pytest.fixture(params=["keyed", "hash-only"])
def scratch_table(request, dynamodb):
    """A table of its own (a scan of the session's shared tables reads every test's items)."""
    name = f"scan-{request.param}-{uuid.uuid4().hex[:8]}"
    keys = [("pk", "HASH")] + ([("sk", "RANGE")] if request.param == "keyed" else [])
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key, _ in keys],
        KeySchema=[{"AttributeName": key, "KeyType": kind} for key, kind in keys],
    )
    yield name, request.param == "keyed"
    dynamodb.delete_table(TableName=name)


def test_a_scan_in_pages_reads_every_item_once_in_the_order_of_one_scan(dynamodb, scratch_table):
    # given 40 items (a table with a sort key, and one without)
    table, keyed = scratch_table
    run = uuid.uuid4().hex
    for n in range(40):
        item = {"pk": {"S": f"S#{run}#{n % 8}"}, "odd": {"BOOL": n % 2 == 1}}
        if keyed:
            item["sk"] = {"S": f"T#{n:03d}"}
        else:
            item["pk"] = {"S": f"S#{run}#{n:03d}"}
        dynamodb.put_item(TableName=table, Item=item)

    def ours(items: list[dict]) -> list[tuple[str, str]]:
        keys = [(item["pk"]["S"], item.get("sk", {}).get("S", "")) for item in items]
        return [key for key in keys if key[0].startswith(f"S#{run}#")]

    # when it is scanned whole, in pages of 7, and in pages of 7 with a filter
    whole = ours(dynamodb.scan(TableName=table)["Items"])
    paged, filtered, start, pages = [], [], None, 0
    while True:
        answer = dynamodb.scan(
            TableName=table, Limit=7, **({"ExclusiveStartKey": start} if start else {})
        )
        assert answer["Count"] <= 7
        paged += ours(answer["Items"])
        pages += 1
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break
    start = None
    while True:
        odd = {"FilterExpression": "odd = :o", "ExpressionAttributeValues": {":o": {"BOOL": True}}}
        answer = dynamodb.scan(
            TableName=table, Limit=7, **odd, **({"ExclusiveStartKey": start} if start else {})
        )
        filtered += ours(answer["Items"])
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break

    # then the pages hold every item once, in the whole scan's order; the filter keeps the odd ones
    assert len(whole) == 40 and paged == whole and pages > 40 / 7
    odd_items = ours(dynamodb.scan(TableName=table, **odd)["Items"])
    assert len(odd_items) == 20 and filtered == odd_items
