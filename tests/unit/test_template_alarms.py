"""Every failure queue of template.yaml has an alarm on its first message: a stream batch, an
upload, a deletion step or a reset email that exhausted its retries is work the product owes
someone, and nobody reads a queue that does not page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.local.template import Template, load_template

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _failure_queues(template: Template) -> set[str]:
    """The queues named as an OnFailure destination (stream mappings, async invocations) or as a
    function's dead letters or step's failures by their logical id."""
    queues = {
        name for name, resource in template.resources.items()
        if resource.get("Type") == "AWS::SQS::Queue" and name.endswith("FailureQueue")
    }  # fmt: skip

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            on_failure = node.get("OnFailure")
            if isinstance(on_failure, dict):
                target = on_failure.get("Destination")
                if isinstance(target, dict) and "Fn::GetAtt" in target:
                    queues.add(str(target["Fn::GetAtt"][0]).split(".")[0])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(template.resources)
    return {q for q in queues if template.resources.get(q, {}).get("Type") == "AWS::SQS::Queue"}


def _alarmed(template: Template) -> set[str]:
    out = set()
    for resource in template.resources.values():
        props = resource.get("Properties") or {}
        if resource.get("Type") != "AWS::CloudWatch::Alarm":
            continue
        if props.get("MetricName") != "ApproximateNumberOfMessagesVisible":
            continue
        for dimension in props.get("Dimensions") or []:
            value = dimension.get("Value")
            if isinstance(value, dict) and "Fn::GetAtt" in value:
                out.add(str(value["Fn::GetAtt"][0]).split(".")[0])
    return out


def test_every_failure_queue_has_an_alarm_on_its_first_message() -> None:
    template = load_template(ROOT / "template.yaml")
    queues = _failure_queues(template)
    assert {"FanoutFailureQueue", "ReactionsFailureQueue", "MediaFailureQueue"} <= queues
    assert queues - _alarmed(template) == set()
