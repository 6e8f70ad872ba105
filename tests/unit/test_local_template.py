"""Unit tests of the local runtime's template loader and intrinsic-function resolver."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from infra.local.template import (
    FunctionSpec,
    ResolveContext,
    ResolveError,
    Template,
    load_template,
    local_api_id,
)

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "runtime" / "template.yaml"

TEMPLATE = """
Transform: AWS::Serverless-2016-10-31
Parameters:
  Env: {Type: String, Default: dev}
  Names: {Type: CommaDelimitedList, Default: "a, b,c"}
  NoDefault: {Type: String}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  Numbered: !Equals ["1", 1]
Mappings:
  Sizes:
    dev: {Memory: 128}
    prod: {Memory: 1024}
Globals:
  Function:
    Runtime: python3.13
    Timeout: 7
    Layers: [!Ref SharedLayer]
    Environment:
      Variables:
        GLOBAL_ONLY: g
        OVERRIDDEN: global
        TABLE: !Ref Table
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-things"
  Unnamed:
    Type: AWS::DynamoDB::Table
    Properties: {}
  Proxy:
    Type: AWS::RDS::DBProxy
  Cluster:
    Type: AWS::RDS::DBCluster
  Cache:
    Type: AWS::ElastiCache::ServerlessCache
  Queue:
    Type: AWS::SQS::Queue
    Properties: {QueueName: jobs}
  Secret:
    Type: AWS::SecretsManager::Secret
  Api:
    Type: AWS::Serverless::HttpApi
  WsApi:
    Type: AWS::ApiGatewayV2::Api
    Properties: {ProtocolType: WEBSOCKET}
  Stage:
    Type: AWS::ApiGatewayV2::Stage
    Properties: {StageName: live}
  SharedLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: layers/shared}
  Thing:
    Type: AWS::Custom::Thing
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/fn/
      Handler: app.handler
      MemorySize: !FindInMap [Sizes, !Ref Env, Memory]
      Layers: [extra-layer]
      Environment:
        Variables:
          OVERRIDDEN: local
          SIZE: !If [IsProd, big, small]
          GONE: !If [IsProd, here, !Ref AWS::NoValue]
      Events:
        Get:
          Type: HttpApi
          Properties: {Path: /x, Method: GET}
  Named:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub "${AWS::StackName}-named"
      Handler: pkg/mod.handler
"""


@pytest.fixture
def template(tmp_path: Path) -> Template:
    path = tmp_path / "template.yaml"
    path.write_text(textwrap.dedent(TEMPLATE))
    return load_template(path)


@pytest.fixture
def ctx() -> ResolveContext:
    return ResolveContext(stack_name="st", region="eu-west-1", account_id="111122223333")


def test_short_tags_load_as_long_forms(template: Template) -> None:
    props = template.resources["Fn"]["Properties"]
    assert props["MemorySize"] == {"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "Memory"]}
    assert template.raw["Conditions"]["IsProd"] == {"Fn::Equals": [{"Ref": "Env"}, "prod"]}
    # a tag the resolver does not implement still loads, for the start-up check to name it
    assert load_template_text("X: !Not [!Condition C]") == {"X": {"Fn::Not": [{"Condition": "C"}]}}
    cidr = load_template_text("X: !Cidr [10.0.0.0/16, 2, 8]\nY: !GetAtt A.B.C")
    assert cidr == {"X": {"Fn::Cidr": ["10.0.0.0/16", 2, 8]}, "Y": {"Fn::GetAtt": ["A", "B.C"]}}


def load_template_text(text: str) -> dict:
    from infra.local.template import load_yaml

    return load_yaml(text)


def test_globals_merge_into_functions(template: Template) -> None:
    fn = template.functions["Fn"]
    assert isinstance(fn, FunctionSpec)
    assert fn.timeout == 7
    assert fn.runtime == "python3.13"
    assert fn.memory == 128  # FindInMap resolved with the parameter default
    assert fn.handler == "app.handler"
    assert fn.code_uri == template.root / "functions" / "fn"
    # Environment.Variables merge key by key; the function's value wins.
    assert fn.environment["GLOBAL_ONLY"] == "g"
    assert fn.environment["OVERRIDDEN"] == "local"
    # Lists add up: the global layers first.
    assert fn.layers == [{"Ref": "SharedLayer"}, "extra-layer"]
    assert set(fn.events) == {"Get"}
    assert set(template.functions) == {"Fn", "Named"}


def test_pseudo_parameters_and_parameters(template: Template, ctx: ResolveContext) -> None:
    r = template.resolve
    assert r({"Ref": "AWS::Region"}, ctx) == "eu-west-1"
    assert r({"Ref": "AWS::AccountId"}, ctx) == "111122223333"
    assert r({"Ref": "AWS::StackName"}, ctx) == "st"
    assert r({"Ref": "AWS::URLSuffix"}, ctx) == "amazonaws.com"
    assert r({"Ref": "AWS::Partition"}, ctx) == "aws"
    assert r({"Ref": "Env"}, ctx) == "dev"
    assert r({"Ref": "Names"}, ctx) == ["a", "b", "c"]
    ctx.parameters["Env"] = "prod"
    assert r({"Ref": "Env"}, ctx) == "prod"
    with pytest.raises(ResolveError):
        r({"Ref": "NoDefault"}, ctx)
    with pytest.raises(ResolveError):
        r({"Ref": "Nope"}, ctx)


def test_resource_defaults(template: Template, ctx: ResolveContext) -> None:
    r = template.resolve
    assert r({"Ref": "Table"}, ctx) == "st-things"
    assert r({"Ref": "Unnamed"}, ctx) == "Unnamed"
    assert r({"Fn::GetAtt": ["Table", "Arn"]}, ctx) == (
        "arn:aws:dynamodb:eu-west-1:111122223333:table/st-things"
    )
    with pytest.raises(ResolveError, match="StreamArn"):
        r({"Fn::GetAtt": ["Table", "StreamArn"]}, ctx)
    assert r({"Fn::GetAtt": ["Proxy", "Endpoint"]}, ctx) == "127.0.0.1"
    assert r({"Fn::GetAtt": ["Cluster", "Endpoint.Address"]}, ctx) == "127.0.0.1"
    assert r({"Fn::GetAtt": ["Cluster", "Endpoint.Port"]}, ctx) == "5432"
    assert r({"Fn::GetAtt": ["Cache", "Endpoint.Address"]}, ctx) == "127.0.0.1"
    assert r({"Fn::GetAtt": ["Cache", "Endpoint.Port"]}, ctx) == "6379"
    assert r({"Ref": "Api"}, ctx) == local_api_id("Api", "st")
    assert r({"Ref": "WsApi"}, ctx) == local_api_id("WsApi", "st")
    assert len(local_api_id("Api")) == 10 and local_api_id("Api").isalnum()
    assert r({"Ref": "Stage"}, ctx) == "live"
    assert r({"Ref": "Queue"}, ctx) == "https://sqs.eu-west-1.amazonaws.com/111122223333/jobs"
    assert r({"Fn::GetAtt": ["Queue", "Arn"]}, ctx) == "arn:aws:sqs:eu-west-1:111122223333:jobs"
    assert r({"Ref": "Thing"}, ctx) == "Thing"
    assert r({"Fn::GetAtt": ["Thing", "Whatever"]}, ctx) == "local-Thing-Whatever"
    assert r({"Fn::GetAtt": ["Fn", "Arn"]}, ctx) == (
        "arn:aws:lambda:eu-west-1:111122223333:function:Fn"
    )
    assert r({"Fn::GetAtt": ["Named", "Arn"]}, ctx).endswith(":function:st-named")


def test_context_values_override_defaults(template: Template, ctx: ResolveContext) -> None:
    ctx.values["Table"] = {"Ref": "real-table", "StreamArn": "arn:stream/1"}
    ctx.values["Secret"] = {"Ref": "arn:secret:abc"}
    assert template.resolve({"Ref": "Table"}, ctx) == "real-table"
    assert template.resolve({"Fn::GetAtt": "Table.StreamArn"}, ctx) == "arn:stream/1"
    assert template.resolve({"Ref": "Secret"}, ctx) == "arn:secret:abc"
    assert template.resolve({"Fn::Sub": "${Table}/${Table.StreamArn}"}, ctx) == (
        "real-table/arn:stream/1"
    )


def test_sub_join_select(template: Template, ctx: ResolveContext) -> None:
    r = template.resolve
    assert r(
        {"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/${Stage}"}, ctx
    ) == (f"https://{local_api_id('Api', 'st')}.execute-api.eu-west-1.amazonaws.com/live")
    assert r({"Fn::Sub": ["${A}-${Env}-${!Literal}", {"A": {"Ref": "Table"}}]}, ctx) == (
        "st-things-dev-${Literal}"
    )
    assert r({"Fn::Sub": "${Cluster.Endpoint.Port}"}, ctx) == "5432"
    assert r({"Fn::Join": [":", ["a", {"Ref": "Env"}, 3]]}, ctx) == "a:dev:3"
    assert r({"Fn::Select": [1, ["x", {"Ref": "Env"}, "z"]]}, ctx) == "dev"
    assert r({"Fn::Select": ["0", ["only"]]}, ctx) == "only"
    with pytest.raises(ResolveError):
        r({"Fn::Select": [5, ["only"]]}, ctx)
    with pytest.raises(ResolveError):
        r({"Fn::Sub": "${Unknown}"}, ctx)


def test_conditions_if_and_no_value(template: Template, ctx: ResolveContext) -> None:
    env = template.functions["Fn"].environment
    assert template.resolve(env, ctx)["SIZE"] == "small"
    assert "GONE" not in template.resolve(env, ctx)
    assert template.condition("IsProd", ctx) is False
    assert template.condition("Numbered", ctx) is True  # "1" equals 1 as CloudFormation strings
    ctx.parameters["Env"] = "prod"
    assert template.resolve(env, ctx)["SIZE"] == "big"
    assert template.resolve(env, ctx)["GONE"] == "here"
    assert template.resolve([1, {"Ref": "AWS::NoValue"}, 2], ctx) == [1, 2]


def test_other_intrinsics(template: Template, ctx: ResolveContext) -> None:
    r = template.resolve
    assert r({"Fn::FindInMap": ["Sizes", "prod", "Memory"]}, ctx) == 1024
    assert r({"Fn::GetAZs": ""}, ctx) == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert r({"Fn::Cidr": ["10.0.0.0/16", 2, 8]}, ctx) == ["10.0.0.0/24", "10.0.1.0/24"]
    # the database policies' proxy id (template.yaml), the web client's own domain condition
    assert r({"Fn::Split": ["/", "a/b"]}, ctx) == ["a", "b"]
    assert r({"Fn::Not": [False]}, ctx) is True
    # the cache's further replication groups (template.yaml, CacheClustersAtLeastN)
    assert r({"Fn::And": [True, {"Fn::Equals": ["1", 1]}]}, ctx) is True
    assert r({"Fn::And": [True, False, True]}, ctx) is False
    assert r({"Fn::Or": [False, {"Fn::Equals": ["a", "b"]}]}, ctx) is False
    assert r({"Fn::Or": [False, {"Fn::Not": [False]}]}, ctx) is True
    for name in ("Fn::And", "Fn::Or"):
        with pytest.raises(ResolveError):
            r({name: [True]}, ctx)  # CloudFormation takes 2 to 10
    for unknown in ("Fn::Unknown", "Fn::Base64", "Fn::ImportValue"):
        assert not template.supports_intrinsic(unknown)
        with pytest.raises(ResolveError):
            r({unknown: 1}, ctx)


def test_function_id_for_references(template: Template, ctx: ResolveContext) -> None:
    assert template.function_id_for({"Fn::GetAtt": ["Fn", "Arn"]}) == "Fn"
    assert template.function_id_for({"Fn::GetAtt": "Fn.Arn"}) == "Fn"
    uri = {"Fn::Sub": "arn:aws:apigateway:${AWS::Region}:lambda:path/functions/${Fn.Arn}/x"}
    assert template.function_id_for(uri) == "Fn"
    assert template.function_id_for("arn:aws:lambda:us-east-1:1:function:Fn") == "Fn"
    resolved = template.resolve({"Fn::GetAtt": ["Named", "Arn"]}, ctx)
    assert template.function_id_for(resolved, ctx) == "Named"
    assert template.function_id_for({"Fn::GetAtt": ["Table", "Arn"]}) is None


def test_fixture_template_loads() -> None:
    template = load_template(FIXTURE)
    assert set(template.functions) >= {"EchoFunction", "EnvFunction", "WebSocketFunction"}
    assert template.root == FIXTURE.parent
