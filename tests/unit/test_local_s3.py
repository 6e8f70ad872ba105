"""The local runtime's S3 and CloudFront: what it refuses of a template at start-up, the POST
policy rules of its S3 endpoint (checked against forms botocore signs), CORS by the bucket's
rules, the lifecycle's due dates, and the project template's media wiring as it reads it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import botocore.session
import pytest

from infra.local.buckets import buckets, distributions, notifications
from infra.local.lifecycle import _due
from infra.local.s3_endpoint import _Refused, check_post_policy, cors_headers, s3_event
from infra.local.support import template_problems
from infra.local.template import ResolveContext, load_template

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _template(
    tmp_path: Path, bucket: dict, event: dict | None = None, more: dict | None = None
) -> Any:
    """A template with the bucket ``Files`` (properties ``bucket``), a function ``Worker`` whose
    S3 event has ``event`` besides its Bucket and Events, and ``more`` resources."""
    properties = {"Bucket": {"Ref": "Files"}, "Events": "s3:ObjectCreated:*", **(event or {})}
    created = {"Type": "S3", "Properties": properties}
    function = {"Handler": "app.handler", "Events": {"Created": created}}
    resources = {
        "Files": {"Type": "AWS::S3::Bucket", "Properties": bucket},
        "Worker": {"Type": "AWS::Serverless::Function", "Properties": function},
        **(more or {}),
    }
    path = tmp_path / "template.yaml"
    path.write_text(json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": resources}))
    return load_template(path)


def test_what_the_emulation_does_not_do_is_refused_by_name(tmp_path: Path):
    template = _template(
        tmp_path,
        {"BucketName": "files", "VersioningConfiguration": {"Status": "Enabled"}},
        {"Filter": {"S3Key": {"Rules": [{"Name": "regex", "Value": "x"}]}}, "Queue": "q"},
    )
    problems = template_problems(template)
    assert "Files (AWS::S3::Bucket): property VersioningConfiguration is not supported" in problems
    assert "Worker event Created (S3): property Queue is not supported" in problems
    assert any("filter rule" in p and "regex" in p for p in problems)


def test_a_distribution_needs_a_bucket_origin_and_known_managed_policies(tmp_path: Path):
    config = {
        "Enabled": True,
        "Origins": [{"Id": "o", "DomainName": "example.com"}],
        "DefaultCacheBehavior": {"TargetOriginId": "o", "CachePolicyId": "made-up"},
    }
    cdn = {"Type": "AWS::CloudFront::Distribution", "Properties": {"DistributionConfig": config}}
    problems = template_problems(_template(tmp_path, {"BucketName": "files"}, None, {"Cdn": cdn}))
    assert any("origin 'o' is not a bucket" in p for p in problems)
    assert any("CachePolicyId 'made-up' is not supported" in p for p in problems)


def test_the_project_template_wires_uploads_to_the_media_function_and_a_cdn():
    template = load_template(ROOT / "template.yaml")
    assert template_problems(template) == []
    context = ResolveContext()
    (media,) = buckets(template, context)
    assert (
        media.logical_id == "MediaBucket"
        and media.name == "warble-local-media-123456789012-us-east-1"
    )
    assert [r["Id"] for r in media.lifecycle_rules] == ["uploads-read-once", "media-never-attached"]
    (notification,) = notifications(template)
    assert notification.function_name == "MediaFunction"
    assert notification.wants("MediaBucket", "ObjectCreated:Post", "uploads/1")
    assert not notification.wants("MediaBucket", "ObjectCreated:Put", "media/1/x.jpg")
    (cdn,) = distributions(template)
    assert cdn.bucket == "MediaBucket" and cdn.headers["X-Content-Type-Options"] == "nosniff"


def _form(key: str = "uploads/1", content_type: str = "image/png", size: int = 100) -> dict:
    session = botocore.session.get_session()
    s3 = session.create_client(
        "s3", region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=botocore.config.Config(signature_version="s3v4"),
    )  # fmt: skip
    form = s3.generate_presigned_post(
        Bucket="files", Key=key, Fields={"Content-Type": content_type},
        Conditions=[["eq", "$Content-Type", content_type], ["content-length-range", 1, size]],
        ExpiresIn=900,
    )  # fmt: skip
    return {name.lower(): value for name, value in form["fields"].items()}


def test_a_form_signed_for_the_upload_passes():
    check_post_policy("files", _form(), 100)


@pytest.mark.parametrize(
    ("change", "size", "code"),
    [({}, 101, "EntityTooLarge"),
     ({"content-type": "image/jpeg"}, 10, "AccessDenied"),
     ({"key": "uploads/2"}, 10, "AccessDenied"),
     ({"x-amz-meta-extra": "1"}, 10, "AccessDenied"),
     ({"x-amz-signature": "0" * 64}, 10, "SignatureDoesNotMatch"),
     ({"policy": ""}, 10, "AccessDenied")],
)  # fmt: skip
def test_what_s3_refuses_of_a_browser_post_is_refused(change: dict, size: int, code: str):
    with pytest.raises(_Refused) as refused:
        check_post_policy("files", {**_form(), **change}, size)
    assert refused.value.code == code


def test_an_expired_form_and_another_bucket_are_refused():
    later = datetime.now(UTC) + timedelta(minutes=16)
    with pytest.raises(_Refused, match="expired"):
        check_post_policy("files", _form(), 10, now=later)
    with pytest.raises(_Refused, match="Condition failed"):
        check_post_policy("other", _form(), 10)


def test_cors_answers_by_the_buckets_rules():
    rules = ({"AllowedOrigins": ["https://app.example"], "AllowedMethods": ["POST"],
              "AllowedHeaders": ["*"], "MaxAge": 60},)  # fmt: skip
    allowed = cors_headers(rules, "https://app.example", "POST", ["content-type"])
    assert allowed and allowed["Access-Control-Allow-Origin"] == "https://app.example"
    assert cors_headers(rules, "https://evil.example", "POST", []) is None
    assert cors_headers(rules, "https://app.example", "DELETE", []) is None


def test_an_object_expires_at_the_first_midnight_utc_a_day_after_it_was_written():
    written = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
    assert _due(written, 1) == datetime(2026, 11, 28, 0, 0, tzinfo=UTC)
    assert _due(datetime(2026, 11, 26, tzinfo=UTC), 1) == datetime(2026, 11, 27, tzinfo=UTC)


def test_an_s3_event_names_the_object_url_encoded_as_s3_does():
    record = s3_event(ResolveContext(), "files", "uploads/a b+c", 7, '"abc"', "ObjectCreated:Post")
    item = record["Records"][0]
    assert (item["eventSource"], item["eventName"]) == ("aws:s3", "ObjectCreated:Post")
    found = item["s3"]["object"]
    assert (found["key"], found["size"], found["eTag"]) == ("uploads/a+b%2Bc", 7, "abc")


def _signed_by_botocore(method: str, url: str, body: bytes, secret: str = "testing"):
    """A request as botocore signs it (SigV4, S3's payload hash header), and its parts."""
    from urllib.parse import urlsplit

    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from multidict import CIMultiDict

    request = AWSRequest(method=method, url=url, data=body)
    S3SigV4Auth(Credentials("testing", secret), "s3", "us-east-1").add_auth(request)
    parts = urlsplit(url)
    headers = CIMultiDict({"Host": parts.netloc, **dict(request.headers.items())})
    return parts.path, parts.query, headers


@pytest.mark.parametrize(
    "method, url",
    [("GET", "http://127.0.0.1:4566/bucket?list-type=2&prefix=media%2F"),
     ("PUT", "http://127.0.0.1:4566/bucket/media/a%20b.png?tagging"),
     ("DELETE", "http://127.0.0.1:4566/bucket/uploads/1")],
)  # fmt: skip
def test_every_request_s_signature_is_checked_not_just_its_presence(method, url):
    """Issue 47 item 7: an Authorization header that only began like a signature was let in."""
    from infra.local.s3_endpoint import check_signature

    path, query, headers = _signed_by_botocore(method, url, b"body")
    check_signature(method, path, query, headers, b"body")  # the local credentials: served
    # another secret, another path, another query, or a look-alike header: refused
    _, _, wrong = _signed_by_botocore(method, url, b"body", secret="not-it")
    for args in (
        (path, query, wrong),
        (path + "x", query, headers),
        (path, query + "&a=1", headers),
    ):
        with pytest.raises(_Refused) as refused:
            check_signature(method, *args, b"body")
        assert refused.value.code == "SignatureDoesNotMatch"
    fake = headers.copy()
    fake["Authorization"] = headers["Authorization"].rsplit("=", 1)[0] + "=" + "0" * 64
    with pytest.raises(_Refused):
        check_signature(method, path, query, fake, b"body")
    del fake["Authorization"]
    with pytest.raises(_Refused) as unsigned:
        check_signature(method, path, query, fake, b"body")
    assert unsigned.value.status == 403


def test_the_media_cdn_reads_what_the_bucket_policy_grants_cloudfront():
    (media,) = distributions(load_template(ROOT / "template.yaml"))
    assert media.readable == ("media/*",)
    assert media.may_read("media/1/2.webp")
    assert not media.may_read("uploads/1") and not media.may_read("")
