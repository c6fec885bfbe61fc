"""The interception CA: where it is, its SPKI hash, and how each browser is told to trust it."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

CA_FILE = "mitmproxy-ca-cert.pem"


@dataclass(frozen=True)
class CertificateAuthority:
    path: Path
    pem: str
    spki_sha256: str

    def browser_setup(self, proxy_server: str) -> dict[str, Any]:
        """Exact settings that make each browser trust intercepted HTTPS (and use the proxy)."""
        spki = self.spki_sha256
        return {
            "playwright": {
                "launch": {
                    "args": [f"--ignore-certificate-errors-spki-list={spki}"],
                },
                "new_context": {"proxy": {"server": proxy_server}, "ignore_https_errors": True},
            },
            "chromium": (
                f"chromium --proxy-server={proxy_server} --proxy-bypass-list='<-loopback>' "
                f"--ignore-certificate-errors-spki-list={spki} --user-data-dir=$(mktemp -d)"
            ),
            "firefox": (
                f"Settings > Privacy & Security > Certificates > View Certificates > Authorities"
                f" > Import {self.path}; Settings > Network Settings > Manual proxy: "
                f"{proxy_server}; about:config network.proxy.allow_hijacking_localhost = true"
            ),
            "desktop_chrome": (
                f"google-chrome --proxy-server={proxy_server} --proxy-bypass-list='<-loopback>' "
                f"--ignore-certificate-errors-spki-list={spki} --user-data-dir=$(mktemp -d) "
                f"(or import {self.path} under chrome://certificate-manager)"
            ),
        }


def load_ca(confdir: str, create: bool = False) -> CertificateAuthority | None:
    """The CA under `confdir`; with `create`, make it first as the proxy would on start."""
    directory = Path(confdir).expanduser()
    path = directory / CA_FILE
    if not path.exists() and create:
        from mitmproxy.certs import CertStore  # late: only this command needs to make a CA

        directory.mkdir(parents=True, exist_ok=True)
        CertStore.from_store(directory, "mitmproxy", 2048)
    if not path.exists():
        return None
    pem = path.read_text()
    cert = x509.load_pem_x509_certificate(pem.encode())
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return CertificateAuthority(path, pem, base64.b64encode(hashlib.sha256(spki).digest()).decode())
