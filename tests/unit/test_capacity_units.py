"""The capacity model's DynamoDB units (bench/capacity.py): DynamoDB's published rules, since
moto answers ReturnConsumedCapacity with constants."""

from __future__ import annotations

from bench.capacity import capacity_units, item_size


def _item(bytes_of_text: int) -> dict:
    return {"pk": {"S": "U#1"}, "text": {"S": "x" * bytes_of_text}}


def test_item_size_counts_names_and_values() -> None:
    assert item_size({"pk": {"S": "U#1"}, "n": {"N": "12345"}, "ok": {"BOOL": True}}) == (
        2 + 3 + 1 + 4 + 2 + 1
    )
    assert item_size(None) == 0


def test_reads_round_up_to_4_kb_and_halve_when_eventually_consistent() -> None:
    big, small = {"Item": _item(5000)}, {"Item": _item(100)}
    assert capacity_units("GetItem", {"ConsistentRead": True}, big) == (2.0, 0.0)
    assert capacity_units("GetItem", {}, small) == (0.5, 0.0)
    # a Query sums its items before rounding; a missing key of a batch still costs a read
    query = {"Items": [_item(1500), _item(1500), _item(1500)]}
    assert capacity_units("Query", {"ConsistentRead": True}, query) == (2.0, 0.0)
    batch = {"RequestItems": {"t": {"Keys": [{}, {}, {}], "ConsistentRead": True}}}
    assert capacity_units("BatchGetItem", batch, {"Responses": {"t": [_item(10)]}}) == (3.0, 0.0)


def test_writes_round_up_to_1_kb_and_double_in_a_transaction() -> None:
    assert capacity_units("PutItem", {"Item": _item(1500)}, {}) == (0.0, 2.0)
    actions = {"TransactItems": [{"Put": {"Item": _item(100)}}, {"Update": {}},
                                 {"ConditionCheck": {}}]}  # fmt: skip
    assert capacity_units("TransactWriteItems", actions, {}) == (0.0, 6.0)
    writes = {"RequestItems": {"t": [{"PutRequest": {"Item": _item(2100)}},
                                     {"DeleteRequest": {"Key": {}}}]}}  # fmt: skip
    assert capacity_units("BatchWriteItem", writes, {}) == (0.0, 4.0)
