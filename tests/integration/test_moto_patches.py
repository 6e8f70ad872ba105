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
