"""Content-Security-Policy: let injected tags run by adding our nonce, and nothing else.

A policy is only ever extended, never loosened: the nonce goes into the directive that governs
<script>/<style> elements (the -elem directive, else the plain one, else default-src), and only
where that directive would otherwise block them. A directive that allows inline code through
'unsafe-inline' and has no nonce or hash is left alone, because adding a nonce there would make
browsers ignore 'unsafe-inline' and break the page's own inline scripts.
"""

from __future__ import annotations

import html
import re

from shifts import native

_NONCE = re.compile(r"'nonce-([A-Za-z0-9+/=_-]+)'")
_META_CSP = re.compile(
    rb"<meta\b[^>]*http-equiv\s*=\s*[\"']?content-security-policy[\"']?[^>]*>", re.IGNORECASE
)
_CONTENT_ATTR = re.compile(rb"""(\bcontent\s*=\s*)(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
KINDS = ("script", "style")


def _directives(policy: str) -> list[list[str]]:
    return [part.split() for part in policy.split(";") if part.strip()]


def _governing(directives: list[list[str]], kind: str) -> list[str] | None:
    by_name = {tokens[0].lower(): tokens for tokens in directives}
    for name in (f"{kind}-src-elem", f"{kind}-src", "default-src"):
        if name in by_name:
            return by_name[name]
    return None


def _needs_nonce(sources: list[str]) -> bool:
    lowered = [source.lower() for source in sources[1:]]
    has_nonce_or_hash = any(
        s.startswith(("'nonce-", "'sha256-", "'sha384-", "'sha512-")) for s in lowered
    )
    if "'strict-dynamic'" in lowered or has_nonce_or_hash:
        return True
    return "'unsafe-inline'" not in lowered


def existing_nonce(policies: list[str]) -> str | None:
    """The page's own script nonce, if its policy has one: reusing it leaves the policy as is."""
    for policy in policies:
        script = _governing(_directives(policy), "script")
        if script:
            for source in script[1:]:
                match = _NONCE.fullmatch(source)
                if match:
                    return match.group(1)
    return None


def restricts(policies: list[str]) -> bool:
    """Whether any policy would block a nonce-less injected <script> or <style>."""
    return any(
        (sources := _governing(_directives(policy), kind)) is not None and _needs_nonce(sources)
        for policy in policies
        for kind in KINDS
    )


def add_nonce(policy: str, nonce: str) -> str:
    """The policy with 'nonce-<nonce>' added wherever an injected script or style needs it."""
    directives = _directives(policy)
    token = f"'nonce-{nonce}'"
    for kind in KINDS:
        sources = _governing(directives, kind)
        if sources is not None and _needs_nonce(sources) and token not in sources:
            if "'none'" in (s.lower() for s in sources):
                sources[:] = [s for s in sources if s.lower() != "'none'"]
            sources.append(token)
    return "; ".join(" ".join(tokens) for tokens in directives)


def add_nonce_to_header(value: str, nonce: str) -> str:
    """A header value may hold several comma-separated policies; each is extended."""
    return ", ".join(add_nonce(policy.strip(), nonce) for policy in value.split(","))


# The first bytes of a page its <meta> policies are looked for in (a head's).
META_POLICY_BYTES = 65536


def meta_policies(body: bytes) -> list[str]:
    """The policies of <meta http-equiv=Content-Security-Policy> tags in the document."""
    if not native.either(native.contains_folded, contains_folded_read, body, b"security-policy"):
        return []  # most pages: one pass without a copy, where the regex would try every <
    found = []
    for tag in _META_CSP.finditer(body):
        content = _CONTENT_ATTR.search(tag.group(0))
        if content:
            raw = content.group(2) if content.group(2) is not None else content.group(3)
            found.append(html.unescape(raw.decode("latin-1")))
    return found


def contains_folded_read(page: bytes, word: bytes) -> bool:
    """Whether the lowercase `word` is in `page` in any case (`native.contains_folded`'s
    definition; the C asks it without a lowered copy of the page)."""
    return word in page.lower()


def add_nonce_to_meta(body: bytes, nonce: str) -> bytes:
    """The document with every meta CSP extended by the nonce (bytes outside the tags unchanged)."""

    def patch_tag(tag: re.Match[bytes]) -> bytes:
        def patch_content(content: re.Match[bytes]) -> bytes:
            raw = content.group(2) if content.group(2) is not None else content.group(3)
            policy = add_nonce_to_header(html.unescape(raw.decode("latin-1")), nonce)
            return (
                content.group(1) + b'"' + html.escape(policy, quote=True).encode("latin-1") + b'"'
            )

        return _CONTENT_ATTR.sub(patch_content, tag.group(0), count=1)

    return _META_CSP.sub(patch_tag, body)
