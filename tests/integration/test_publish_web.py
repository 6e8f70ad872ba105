"""Publishing the web client to S3 behind CloudFront (infra/publish_web.py), against the moto
server: every file with its content type, config.json naming the stack's URLs, the cache
invalidated."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from infra.publish_web import files_to_publish, publish

pytestmark = pytest.mark.integration


def test_publish_uploads_the_client_and_its_config_and_invalidates(moto) -> None:
    s3 = boto3.client("s3", endpoint_url=moto.url, region_name="us-east-1")
    cloudfront = boto3.client("cloudfront", endpoint_url=moto.url, region_name="us-east-1")
    bucket = f"web-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    origin = {"Id": "web-client", "DomainName": f"{bucket}.s3.amazonaws.com",
              "S3OriginConfig": {"OriginAccessIdentity": ""}}  # fmt: skip
    distribution = cloudfront.create_distribution(
        DistributionConfig={
            "CallerReference": bucket,
            "Comment": "web client",
            "Enabled": True,
            "DefaultRootObject": "index.html",
            "Origins": {"Quantity": 1, "Items": [origin]},
            "DefaultCacheBehavior": {
                "TargetOriginId": "web-client",
                "ViewerProtocolPolicy": "redirect-to-https",
                "CachePolicyId": "658327ea-f89d-4fab-a63d-7e88639e58f6",
            },
        }
    )["Distribution"]

    keys = publish(
        s3,
        cloudfront,
        bucket=bucket,
        distribution_id=distribution["Id"],
        http_api_url="https://abc.execute-api.us-east-1.amazonaws.com",
        websocket_url="wss://def.execute-api.us-east-1.amazonaws.com/live",
    )

    stored = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert stored == set(keys) == {key for key, _ in files_to_publish()} | {"config.json"}
    assert {"index.html", "src/app.js", "vendor/preact.module.js", "style.css"} <= stored
    assert not any(key.endswith(".md") for key in stored)
    page = s3.get_object(Bucket=bucket, Key="index.html")
    assert page["ContentType"].startswith("text/html") and page["CacheControl"] == "no-cache"
    module = s3.get_object(Bucket=bucket, Key="src/app.js")
    assert module["ContentType"].startswith("text/javascript")  # ES modules need a JS type
    config = s3.get_object(Bucket=bucket, Key="config.json")
    assert config["CacheControl"] == "no-store"
    assert json.loads(config["Body"].read()) == {
        "HttpApiUrl": "https://abc.execute-api.us-east-1.amazonaws.com",
        "WebSocketUrl": "wss://def.execute-api.us-east-1.amazonaws.com/live",
    }
    invalidations = cloudfront.list_invalidations(DistributionId=distribution["Id"])
    assert invalidations["InvalidationList"]["Quantity"] == 1
