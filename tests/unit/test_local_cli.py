"""Unit tests of the local runtime's CLI helpers: --env-vars files and schedules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.local.__main__ import build_parser, schedule_rules, scheduled_event_for
from infra.local.lambdas import read_env_vars
from infra.local.template import ResolveContext, load_template

pytestmark = pytest.mark.unit

TEMPLATE = """
Resources:
  Job:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Events:
        Every15:
          Type: ScheduleV2
          Properties: {ScheduleExpression: rate(15 minutes), Name: refresh}
        WithInput:
          Type: Schedule
          Properties: {Schedule: rate(1 hour), Input: '{"kind": "nightly"}'}
        Off:
          Type: Schedule
          Properties: {Schedule: rate(1 day), Enabled: false}
        Api:
          Type: HttpApi
          Properties: {Path: /x, Method: GET}
"""


def test_schedule_rules_and_their_events(tmp_path: Path) -> None:
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    context = ResolveContext()
    rules = {rule: props for _, rule, props in schedule_rules(load_template(path), context)}
    assert set(rules) == {"refresh", "WithInput"}  # disabled and non-schedule events left out
    assert scheduled_event_for(context, "WithInput", rules["WithInput"]) == {"kind": "nightly"}
    event = scheduled_event_for(context, "refresh", rules["refresh"])
    assert event["detail-type"] == "Scheduled Event"
    assert event["resources"] == ["arn:aws:events:us-east-1:123456789012:rule/refresh"]


def test_env_vars_file(tmp_path: Path) -> None:
    good = tmp_path / "env.json"
    good.write_text(json.dumps({"Parameters": {"A": "1"}, "Fn": {"B": "2"}}))
    assert read_env_vars(str(good)) == {"Parameters": {"A": "1"}, "Fn": {"B": "2"}}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"Parameters": "not a map"}))
    with pytest.raises(SystemExit):
        read_env_vars(str(bad))


def test_serve_defaults_match_the_architecture() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.http_port, args.ws_port, args.moto_port) == (3000, 3001, 5005)
    assert (args.template, args.stack_name) == ("template.yaml", "warble-local")
