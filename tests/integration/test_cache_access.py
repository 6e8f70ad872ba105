"""The cache as template.yaml sets it up (issue 33 item 5): TLS, and one user that signs in with
an IAM token and may run every command but the dangerous ones (ElastiCache RBAC). Here a
private redis-server speaks TLS with a certificate of a test CA, and holds the template's
application user as an ACL user that takes any password (as `make run` does: an IAM token is
signed locally, and checked only by ElastiCache)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from warble import services

from infra.local.template import load_template
from tests.conftest import ROOT
from tests.support.redis_server import free_port

pytestmark = pytest.mark.integration


def _certificate(name: str, key, issuer_key, issuer_name, ca: bool) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        # The key identifiers and a CA's key usage: Python 3.13's default context verifies
        # strictly (VERIFY_X509_STRICT) and refuses a chain without them, as AWS's have them.
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=True,
                          crl_sign=True, encipher_only=False, decipher_only=False),
            critical=True,
        )  # fmt: skip
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(path: Path, *objects) -> Path:
    parts = []
    for item in objects:
        if isinstance(item, x509.Certificate):
            parts.append(item.public_bytes(serialization.Encoding.PEM))
        else:
            parts.append(item.private_bytes(serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))  # fmt: skip
    path.write_bytes(b"".join(parts))
    return path


def _authority(tmp: Path, name: str) -> tuple[Path, object, x509.Name]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    return _pem(tmp / f"{name}.pem", _certificate(name, key, key, subject, True)), key, subject


@pytest.fixture(scope="module")
def tls_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """rediss:// URL of a TLS redis-server, its CA, and another CA (which did not sign it)."""
    tmp = tmp_path_factory.mktemp("tls")
    ca, ca_key, ca_name = _authority(tmp, "warble-test-ca")
    stranger, _, _ = _authority(tmp, "stranger-ca")
    key = ec.generate_private_key(ec.SECP256R1())
    _pem(tmp / "server.pem", _certificate("cache", key, ca_key, ca_name, False))
    _pem(tmp / "server.key", key)
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
         "--tls-cert-file", str(tmp / "server.pem"), "--tls-key-file", str(tmp / "server.key"),
         "--tls-ca-cert-file", str(ca), "--tls-auth-clients", "no", "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    admin = redis.Redis(
        host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=str(ca), socket_connect_timeout=0.5
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            admin.ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "the TLS redis-server never answered"
            time.sleep(0.05)
    # The application user exactly as template.yaml gives it to ElastiCache, any password.
    user = load_template(ROOT / "template.yaml").resources["CacheAppUser"]["Properties"]
    admin.execute_command("ACL", "SETUSER", "warble-test-app", "reset", "nopass",
                          *user["AccessString"].split())  # fmt: skip
    assert user["AuthenticationMode"] == {"Type": "iam"}
    admin.close()
    yield f"rediss://127.0.0.1:{port}/0", ca, stranger
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def cache_settings(tls_cache, monkeypatch):
    url, ca, _ = tls_cache
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.setenv("REDIS_CLUSTER", "false")
    monkeypatch.setenv("REDIS_CA_CERTS", str(ca))
    monkeypatch.setenv("REDIS_IAM_USER", "warble-test-app")
    monkeypatch.setenv("REDIS_CACHE_NAME", "warble-test-cache")
    services.reset()
    yield tls_cache
    services.reset()


def test_the_app_user_signs_in_with_its_token_over_verified_tls(cache_settings):
    client = services.container().redis
    assert client.acl_whoami() == "warble-test-app"
    client.set("{u:1}:probe", "1", ex=60)
    assert client.get("{u:1}:probe") == "1"
    # what the code runs: scripts (the gate's), pipelines, geo commands
    assert client.eval("return redis.call('GET', KEYS[1])", 1, "{u:1}:probe") == "1"
    # and what it may not: the dangerous commands
    for command in (("KEYS", "*"), ("FLUSHALL",), ("CONFIG", "GET", "maxmemory")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.execute_command(*command)


def test_a_certificate_of_another_ca_is_refused(cache_settings, monkeypatch):
    _, _, stranger = cache_settings
    monkeypatch.setenv("REDIS_CA_CERTS", str(stranger))
    services.reset()
    with pytest.raises(redis.ConnectionError):
        services.container().redis.ping()
