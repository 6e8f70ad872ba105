"""IAM authentication tokens (issue 33 item 5): the functions sign in to RDS Proxy and to the
cache with tokens signed here, as botocore's own helper signs them, and TLS to the proxy trusts
the roots of its ACM certificate."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import parse_qs, urlsplit

import botocore.session
import pytest
from warble.dal import aws_auth

from tests.conftest import ROOT

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    aws_auth.botocore_session.cache_clear()
    yield
    aws_auth.botocore_session.cache_clear()


def _query(token: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(f"https://{token}").query).items()}


def test_the_rds_token_is_the_one_botocore_makes():
    ours = aws_auth.rds_token("proxy.example.com", 5432, "warble_reader", "eu-west-1")
    rds = botocore.session.get_session().create_client("rds", region_name="eu-west-1")
    theirs = rds.generate_db_auth_token("proxy.example.com", 5432, "warble_reader")
    assert ours.split("?")[0] == theirs.split("?")[0] == "proxy.example.com:5432/"
    mine, botocores = _query(ours), _query(theirs)
    assert mine.keys() == botocores.keys()
    for name in ("Action", "DBUser", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Expires"):
        assert mine[name] == botocores[name], name
    assert mine["X-Amz-Credential"].endswith("/eu-west-1/rds-db/aws4_request")


def test_the_cache_token_names_the_user_and_the_serverless_cache():
    token = aws_auth.elasticache_token("Warble-Cache", "warble-app", "us-east-1")
    assert token.startswith("warble-cache/?")
    query = _query(token)
    assert (query["Action"], query["User"], query["ResourceType"]) == (
        "connect", "warble-app", "ServerlessCache"
    )  # fmt: skip
    assert query["X-Amz-Credential"].endswith("/us-east-1/elasticache/aws4_request")
    assert query["X-Amz-Expires"] == "900"


def test_the_token_of_a_node_based_cluster_names_its_replication_group_and_no_resource_type():
    """The 1M profiles and up deploy a replication group: its token's request has no
    ResourceType (AWS's IAM authentication guide), and the group's id as its host."""
    token = aws_auth.elasticache_token("Warble-Nodes", "warble-app", "us-east-1", serverless=False)
    assert token.startswith("warble-nodes/?")
    query = _query(token)
    assert (query["Action"], query["User"]) == ("connect", "warble-app")
    assert "ResourceType" not in query


# The four Amazon Trust Services roots (https://www.amazontrust.com/repository/), by SHA-256.
AMAZON_ROOTS = {
    "8ecde6884f3d87b1125ba31ac3fcb13d7016de7f57cc904fe1cb97c6ae98196e",  # Amazon Root CA 1
    "1ba5b2aa8c65401a82960118f80bec4f62304d83cec4713a19c39c011ea46db4",  # Amazon Root CA 2
    "18ce6cfe7bf14e60b2e347b8dfe868cb31d02ebb3ada271569f50343b46db3a4",  # Amazon Root CA 3
    "e35d28419ed02025cfa69038cd623962458da5c695fbdea3c22b0bfb25897092",  # Amazon Root CA 4
}


def test_the_proxy_is_verified_against_amazon_trust_services_roots_only():
    import base64

    pem = (ROOT / "layers/shared/warble/certs/amazon-root-cas.pem").read_text()
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", pem, re.S)
    found = {hashlib.sha256(base64.b64decode("".join(b.split()))).hexdigest() for b in blocks}
    assert found == AMAZON_ROOTS
