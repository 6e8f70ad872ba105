"""Unit tests of what the local runtime refuses: a template fragment asking for something it does
not emulate fails at start-up, naming the resource (or function and event) and the property."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from infra.local.__main__ import main
from infra.local.errors import UnsupportedTemplateError
from infra.local.event_filters import matches_filters
from infra.local.provisioning import provision
from infra.local.stream_mappings import stream_mappings
from infra.local.support import check_template, template_problems
from infra.local.template import ResolveContext, ResolveError, Template, load_template

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

TABLE = """
  Things:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      StreamSpecification: {StreamViewType: NEW_AND_OLD_IMAGES}
"""


def consumer(properties: str, table: str = TABLE) -> str:
    """A template with one table and a function consuming its stream with `properties`."""
    body = textwrap.indent(textwrap.dedent(properties).strip(), " " * 12)
    return f"""
Transform: AWS::Serverless-2016-10-31
Resources:{table}
  Consumer:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Events:
        Changes:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Things.StreamArn
            StartingPosition: TRIM_HORIZON
{body}
"""


def load(tmp_path: Path, text: str) -> Template:
    path = tmp_path / "template.yaml"
    path.write_text(textwrap.dedent(text))
    return load_template(path)


def refused(template: Template) -> str:
    with pytest.raises(UnsupportedTemplateError) as error:
        check_template(template)
    return str(error.value)


@pytest.mark.parametrize(
    "path",
    [
        "template.yaml",
        "tests/fixtures/runtime/template.yaml",
        "tests/fixtures/streams/template.yaml",
    ],
)
def test_the_project_and_fixture_templates_are_fully_supported(path: str) -> None:
    assert template_problems(load_template(ROOT / path)) == []


def test_an_unknown_resource_type_is_refused(tmp_path: Path) -> None:
    # given a template with an SNS topic, which the local runtime does not create
    template = load(tmp_path, f"Resources:{TABLE}\n  Alerts:\n    Type: AWS::SNS::Topic\n")
    # then the check names the resource and its type
    assert "Alerts (AWS::SNS::Topic): resource type AWS::SNS::Topic is not supported" in (
        refused(template)
    )


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ("TumblingWindowInSeconds: 60", "property TumblingWindowInSeconds is not supported"),
        ("StartingPositionTimestamp: 1", "property StartingPositionTimestamp is not supported"),
        ("MaximumRecordAgeInSeconds: 60", "property MaximumRecordAgeInSeconds is not supported"),
        ("Enabled: false", "property Enabled is not supported"),
        (
            "DestinationConfig: {OnFailure: {Type: SNS, Destination: arn:aws:sns:x}}",
            "DestinationConfig.OnFailure.Type 'SNS' is not supported (only SQS)",
        ),
        (
            """FilterCriteria: {Filters: [{Pattern: '{"eventName": [{"suffix": "VE"}]}'}]}""",
            "FilterCriteria filter rule {'suffix': 'VE'} at .eventName is not supported",
        ),
        (
            "FilterCriteria: {Filters: [{Pattern: '{not json'}]}",
            "FilterCriteria pattern is not JSON",
        ),
    ],
)
def test_an_unsupported_stream_event_property_is_refused(
    tmp_path: Path, properties: str, expected: str
) -> None:
    # given a stream consumer asking for something the local pollers do not do
    template = load(tmp_path, consumer(properties))
    # then the start-up check names the function, the event and the property
    message = refused(template)
    assert f"Consumer event Changes (DynamoDB): {expected}" in message
    # and so do the pollers, should they be built without the check (tests build them directly)
    with pytest.raises(UnsupportedTemplateError, match="Consumer event Changes"):
        stream_mappings(template, ResolveContext())


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "      LocalSecondaryIndexes: [{IndexName: i, KeySchema: [], Projection: {}, X: 1}]\n",
            "Things (AWS::DynamoDB::Table): property LocalSecondaryIndexes[0].X is not supported",
        ),
        (
            "      ContributorInsightsSpecification: {Enabled: true}\n",
            "Things (AWS::DynamoDB::Table): property ContributorInsightsSpecification is not",
        ),
        (
            "      TimeToLiveSpecification: {AttributeName: ttl, Enabled: true, Kind: x}\n",
            "Things (AWS::DynamoDB::Table): property TimeToLiveSpecification.Kind is not",
        ),
    ],
)
def test_an_unsupported_table_property_is_refused_before_anything_is_created(
    tmp_path: Path, extra: str, expected: str
) -> None:
    template = load(tmp_path, f"Resources:{TABLE}{extra}")
    assert expected in refused(template)
    # provision refuses it too, before it talks to any server (nothing listens on port 9)
    with pytest.raises(UnsupportedTemplateError, match="Things"):
        provision(template, "http://127.0.0.1:9", ResolveContext())


def test_provisioned_billing_is_refused(tmp_path: Path) -> None:
    template = load(tmp_path, f"Resources:{TABLE.replace('PAY_PER_REQUEST', 'PROVISIONED')}")
    assert "Things (AWS::DynamoDB::Table): BillingMode 'PROVISIONED' is not supported" in (
        refused(template)
    )


def test_an_unknown_intrinsic_is_refused_wherever_it_is(tmp_path: Path) -> None:
    # given intrinsics the resolver does not implement (no template uses them), in a resource the
    # runtime never resolves (a log group), beside one it does (Join)
    template = load(
        tmp_path,
        """
        Resources:
          Logs:
            Type: AWS::Logs::LogGroup
            Properties:
              RetentionInDays: !Length [1, 2]
              LogGroupName: !Join ["", [!Base64 x, !ToJsonString [y]]]
              KmsKeyId: !ImportValue key
        """,
    )
    # then the check names where each is
    message = refused(template)
    assert "Resources.Logs.Properties.RetentionInDays: intrinsic function Fn::Length is not" in (
        message
    )
    for name in ("ToJsonString", "Base64", "ImportValue"):
        assert f"intrinsic function Fn::{name} is not supported" in message
    assert "function Fn::Join" not in message


def test_functions_events_conditions_and_transforms_outside_the_template_are_refused(
    tmp_path: Path,
) -> None:
    template = load(
        tmp_path,
        """
        Transform: [AWS::Serverless-2016-10-31, AWS::LanguageExtensions]
        Conditions:
          Never: !Equals [a, b]
        Resources:
          Fn:
            Type: AWS::Serverless::Function
            Properties:
              Handler: app.handler
              ReservedConcurrentExecutions: 1
              Events:
                Queue:
                  Type: SQS
                  Properties: {Queue: arn:aws:sqs:us-east-1:1:q, ScalingConfig: {}}
                Api:
                  Type: HttpApi
                  Properties: {Path: /x, Method: GET, TimeoutInMillis: 100}
          Maybe:
            Type: AWS::SQS::Queue
            Condition: Never
        """,
    )
    message = refused(template)
    assert "Transform 'AWS::LanguageExtensions' is not supported" in message
    assert "Fn (AWS::Serverless::Function): property ReservedConcurrentExecutions is not" in message
    assert "Fn event Queue (SQS): property ScalingConfig is not supported" in message
    assert "Fn event Api (HttpApi): property TimeoutInMillis is not supported" in message
    assert "Maybe (AWS::SQS::Queue): Condition 'Never' is not supported" in message


def test_an_authorizer_is_refused_by_name(tmp_path: Path) -> None:
    # given template.yaml as a developer would change it to put an authorizer on the HTTP API,
    # a route and the WebSocket $connect, and stage variables on the API
    text = (ROOT / "template.yaml").read_text()
    api = "      Description: Warble HTTP API (v1)\n"
    assert api in text
    text = text.replace(
        api,
        api
        + """      StageVariables: {Mode: live}
      Auth:
        DefaultAuthorizer: SessionAuthorizer
        Authorizers:
          SessionAuthorizer:
            FunctionArn: !GetAtt AccountsFunction.Arn
            Identity: {Headers: [Authorization]}
""",
    )
    # (the $connect route's Lambda REQUEST authorizer is emulated; an IAM one is not)
    connect = "      RouteKey: $connect\n      AuthorizationType: CUSTOM\n"
    assert connect in text
    text = text.replace(connect, "      RouteKey: $connect\n      AuthorizationType: AWS_IAM\n")
    later = """
  Later:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/meta/
      Handler: app.handler
      Events:
        Private:
          Type: HttpApi
          Properties: {ApiId: !Ref HttpApi, Path: /x, Method: GET, Auth: {Authorizer: Other}}
"""
    text = text.replace("\nResources:\n", "\nResources:\n" + later.lstrip("\n"), 1)
    path = tmp_path / "template.yaml"
    path.write_text(text)
    # then the start-up check names each of them, and nothing else
    problems = template_problems(load_template(path))
    assert problems == [
        "HttpApi (AWS::Serverless::HttpApi): authorizer 'SessionAuthorizer' (Auth.Authorizers) "
        "is not supported: the handlers check the session (warble.http.app), and an authorizer "
        "would answer 401/403 in its own shape",
        "HttpApi (AWS::Serverless::HttpApi): Auth.DefaultAuthorizer 'SessionAuthorizer' is not "
        "supported",
        "HttpApi (AWS::Serverless::HttpApi): property StageVariables is not supported",
        "Later event Private (HttpApi): property Auth is not supported",
        "WebSocketConnectRoute (AWS::ApiGatewayV2::Route): AuthorizationType 'AWS_IAM' is not "
        "supported (NONE, or CUSTOM: a Lambda REQUEST authorizer)",
    ]


def test_the_command_line_refuses_an_unsupported_template_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a template whose stream consumer asks for tumbling windows
    path = tmp_path / "template.yaml"
    path.write_text(textwrap.dedent(consumer("TumblingWindowInSeconds: 60")))
    # when it is invoked (which would otherwise start a throwaway moto server)
    code = main(["invoke", "Consumer", "--template", str(path)])
    # then it stops at once with the problem named
    assert code == 2
    assert "Consumer event Changes (DynamoDB): property TumblingWindowInSeconds" in (
        capsys.readouterr().err
    )


def test_filters_match_exact_values_and_prefixes_only() -> None:
    record = {"eventName": "INSERT", "dynamodb": {"Keys": {"sk": {"S": "T#1"}}}}
    prefix = {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "T#"}]}}}}
    assert matches_filters(record, [prefix])
    assert matches_filters(record, [{"eventName": ["REMOVE"]}, prefix])
    assert not matches_filters(record, [{"eventName": ["REMOVE"]}])
    assert not matches_filters(record, [{"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "O#"}]}}}}])
    assert not matches_filters(record, [{"dynamodb": {"NewImage": {"x": {"S": ["a"]}}}}])
    assert matches_filters(record, [])


def test_filters_match_a_boolean_by_its_value_not_as_a_number() -> None:
    friend = {"dynamodb": {"OldImage": {"friend": {"BOOL": True}}}}
    assert matches_filters(friend, [{"dynamodb": {"OldImage": {"friend": {"BOOL": [True]}}}}])
    assert not matches_filters(friend, [{"dynamodb": {"OldImage": {"friend": {"BOOL": [1]}}}}])
    assert not matches_filters(friend, [{"dynamodb": {"OldImage": {"friend": {"BOOL": [False]}}}}])
    assert matches_filters({"n": 1}, [{"n": [1.0]}])
    assert not matches_filters({"n": 1}, [{"n": [True]}])


def test_an_unknown_attribute_of_a_resource_the_runtime_provides_is_an_error(
    tmp_path: Path,
) -> None:
    # given a table, whose Arn and StreamArn the runtime knows, and nothing else
    template = load(tmp_path, f"Resources:{TABLE}")
    context = ResolveContext(values={"Things": {"StreamArn": "arn:stream"}})
    assert template.resolve({"Fn::GetAtt": ["Things", "StreamArn"]}, context) == "arn:stream"
    # then another attribute is an error, not a made-up value
    with pytest.raises(ResolveError, match=r"GetAtt Things\.LatestStreamLabel: attribute not"):
        template.resolve({"Fn::GetAtt": ["Things", "LatestStreamLabel"]}, context)


def test_what_a_websocket_mock_route_may_ask_for_is_checked_by_name(tmp_path: Path) -> None:
    # given template.yaml's heartbeat route changed as a developer might: VTL in the answer,
    # a template chosen by content type, response parameters, another route response key, and
    # an HTTP integration with an integration response
    text = (ROOT / "template.yaml").read_text()
    for old, new in [
        ("        $default: '{\"type\": \"heartbeat\", \"data\": {}}'\n",
         "        $default: '{\"type\": \"heartbeat\", \"at\": \"$context.requestTime\"}'\n"
         "      ResponseParameters: {}\n"),
        ("      IntegrationType: MOCK\n      TemplateSelectionExpression: \\$default\n",
         "      IntegrationType: MOCK\n"
         "      TemplateSelectionExpression: $request.header.Content-Type\n"),
        ("      RouteId: !Ref WebSocketHeartbeatRoute\n      RouteResponseKey: $default\n",
         "      RouteId: !Ref WebSocketHeartbeatRoute\n      RouteResponseKey: ok\n"),
    ]:  # fmt: skip
        assert old in text, old
        text = text.replace(old, new)
    other = """
  OtherIntegration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref WebSocketApi
      IntegrationType: HTTP
      IntegrationUri: https://example.com/
  OtherIntegrationResponse:
    Type: AWS::ApiGatewayV2::IntegrationResponse
    Properties:
      ApiId: !Ref WebSocketApi
      IntegrationId: !Ref OtherIntegration
      IntegrationResponseKey: 2xx
"""
    assert text.count("\nOutputs:\n") == 1
    text = text.replace("\nOutputs:\n", other + "\nOutputs:\n")
    path = tmp_path / "template.yaml"
    path.write_text(text)
    # then the start-up check names each of them, and nothing else
    problems = template_problems(load_template(path))
    assert problems == [
        "OtherIntegration (AWS::ApiGatewayV2::Integration): IntegrationType 'HTTP' is not "
        "supported (AWS_PROXY to a function, or MOCK)",
        "OtherIntegrationResponse (AWS::ApiGatewayV2::IntegrationResponse): an integration "
        "response of an integration of type 'HTTP' is not supported (only of a MOCK integration)",
        "OtherIntegrationResponse (AWS::ApiGatewayV2::IntegrationResponse): "
        "IntegrationResponseKey '2xx' is not supported ('$default' or a /regular expression/ "
        "of the status)",
        "WebSocketHeartbeatIntegration (AWS::ApiGatewayV2::Integration): "
        "TemplateSelectionExpression '$request.header.Content-Type' is not supported (only "
        "'\\\\$default', which selects the '$default' template)",
        "WebSocketHeartbeatIntegrationResponse (AWS::ApiGatewayV2::IntegrationResponse): "
        "property ResponseParameters is not supported",
        "WebSocketHeartbeatIntegrationResponse (AWS::ApiGatewayV2::IntegrationResponse): "
        "ResponseTemplates['$default'] is not supported: a template with VTL (a $ reference "
        "or a # directive) is not emulated, only static text",
        "WebSocketHeartbeatRouteResponse (AWS::ApiGatewayV2::RouteResponse): RouteResponseKey "
        "'ok' is not supported (only '$default')",
    ]
