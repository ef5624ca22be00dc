"""Certificates made at test time: a CA, a server certificate for localhost, a client one."""

import datetime
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject_key, cn, issuer_key=None, issuer_cn=None, ca=False, san=None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(issuer_cn or cn))
        .public_key(subject_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(s) for s in san]), critical=False
        )
    return builder.sign(issuer_key or subject_key, hashes.SHA256())


def _pem(obj) -> bytes:
    if isinstance(obj, x509.Certificate):
        return obj.public_bytes(serialization.Encoding.PEM)
    return obj.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_pki(d: Path) -> dict[str, bytes | Path]:
    """A CA, a server certificate for localhost, and a client certificate."""
    ca_key = _key()
    ca = _cert(ca_key, "scorewire test CA", ca=True)
    srv_key = _key()
    srv = _cert(srv_key, "localhost", ca_key, "scorewire test CA", san=["localhost"])
    cli_key = _key()
    cli = _cert(cli_key, "client", ca_key, "scorewire test CA")
    files = {
        "ca": _pem(ca),
        "srv_cert": _pem(srv),
        "srv_key": _pem(srv_key),
        "cli_cert": _pem(cli),
        "cli_key": _pem(cli_key),
    }
    out: dict[str, bytes | Path] = dict(files)
    for k, v in files.items():
        (d / f"{k}.pem").write_bytes(v)
        out[f"{k}_path"] = d / f"{k}.pem"
    return out


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes | Path]:
    """PEM bytes (`ca`, `srv_cert`, ...) and their files (`ca_path`, ...)."""
    return make_pki(tmp_path_factory.mktemp("pki"))
