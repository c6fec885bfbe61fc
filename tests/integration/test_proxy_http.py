"""The real service process, a real upstream, real HTTP clients through the proxy."""

from __future__ import annotations

import hashlib
import subprocess
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers.pages import RELABEL_ONLY
from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import BIG_BINARY, CSP_NONCE, PAGE, UpstreamServer

NAV = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}


def test_unbound_request_gets_a_407_challenge(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    seen = len(upstream.requests)
    with service.client() as client:
        response = client.get(f"{upstream.origin}/page.html")
    assert response.status_code == 407
    assert response.headers["proxy-authenticate"].startswith("Basic")
    assert "episode" in response.text
    assert len(upstream.requests) == seen  # nothing forwarded


def test_src_page_is_the_upstreams_bytes(service: ServiceProcess, upstream: UpstreamServer) -> None:
    episode = service.create_episode(condition="Src")
    with service.client(episode) as client:
        response = client.get(f"{upstream.origin}/page.html", headers=NAV)
    assert response.status_code == 200 and response.content == PAGE


def test_binding_header_and_credentials_never_reach_upstream(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        echoed = client.get(f"{upstream.origin}/echo").json()
    names = {name.lower() for name in echoed}
    assert "x-skillshift-episode" not in names and "proxy-authorization" not in names
    assert "x-skillshift-proxied" in names  # the mark every admin API refuses (api/app.py)
    proxy = f"http://{episode['id']}:{episode['token']}@127.0.0.1:{service.proxy_port}"
    with httpx.Client(proxy=proxy) as client:
        echoed = client.get(f"{upstream.origin}/echo").json()
    assert "proxy-authorization" not in {name.lower() for name in echoed}


def test_curl_with_header_gets_the_shifted_page(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src-Exec", regime="multiple", seed=7)
    result = subprocess.run(
        [
            "curl",
            "-s",
            "-x",
            service.proxy,
            "-H",
            f"X-SkillShift-Episode: {episode['id']}",
            f"{upstream.origin}/page.html",
        ],
        capture_output=True,
        check=True,
        timeout=20,
    )
    assert b'<script src="/__ss/r.js?v=' in result.stdout
    assert (
        result.stdout.replace(
            result.stdout[
                result.stdout.index(b"<script src") : result.stdout.index(b"</script>") + 9
            ],
            b"",
        )
        == PAGE
    )
    types = [event["type"] for event in service.events(str(episode["id"]))]
    assert types == ["episode_created", "page_served", "popup_injected"]


def test_a_big_execution_only_page_streams_and_an_http10_browser_gets_it_whole(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """Through mitmproxy itself: a 1 MB `Src-Exec` page is streamed in chunks, its runtime put
    in its start; an HTTP/1.0 browser, which reads a body of no length to the connection's
    end, gets it buffered, with its length. The same page either way, each load counted."""
    big = PAGE.replace(b"</body>", b"<p>" + b"x" * 1_000_000 + b"</p></body>")
    upstream.extra["/big-exec.html"] = ("text/html; charset=utf-8", big)
    episode = service.create_episode(condition="Src-Exec", regime="multiple", seed=7)
    served = {}
    for version in ("--http1.1", "--http1.0"):
        result = subprocess.run(
            [
                "curl",
                "-s",
                "-D",
                "-",
                version,
                "-x",
                service.proxy,
                "-H",
                f"X-SkillShift-Episode: {episode['id']}",
                f"{upstream.origin}/big-exec.html",
            ],
            capture_output=True,
            check=True,
            timeout=30,
        )
        head, _, body = result.stdout.partition(b"\r\n\r\n")
        served[version] = (head.lower(), body)
    (streamed_head, streamed), (whole_head, whole) = served["--http1.1"], served["--http1.0"]
    assert b"transfer-encoding: chunked" in streamed_head
    assert b"content-length" not in streamed_head
    assert f"content-length: {len(whole)}".encode() in whole_head
    for body in (streamed, whole):
        tag = body[body.index(b"<script src=") : body.index(b"</script>") + 9]
        assert b"/__ss/r.js?v=" in tag and body.replace(tag, b"") == big
    assert streamed.index(b"<script src=") == whole.index(b"<script src=")
    loads = [
        event["load_index"]
        for event in service.events(str(episode["id"]))
        if event["type"] == "page_served"
    ]
    assert loads == [1, 2]


def test_every_content_encoding_is_decoded_and_reencoded(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        for encoding in ("gzip", "deflate", "br", "zstd"):
            response = client.get(
                f"{upstream.origin}/encoded/{encoding}",
                headers={**NAV, "Accept-Encoding": encoding},
            )
            assert response.headers["content-encoding"] == encoding
            assert b">Log in</a>" in response.content and b">Sign in</a>" not in response.content
            assert response.headers["cache-control"] == "no-store"


def test_truncated_gzip_fails_closed(service: ServiceProcess, upstream: UpstreamServer) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        response = client.get(f"{upstream.origin}/truncated-gzip", headers=NAV)
    assert response.status_code == 502 and "could not be decoded" in response.text


def test_csp_nonce_page_keeps_its_policy_and_nonce(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src-Exec", regime="multiple")
    with service.client(episode) as client:
        direct = httpx.get(f"{upstream.origin}/csp")
        response = client.get(f"{upstream.origin}/csp", headers=NAV)
    # The script directive already admits the page's nonce; only style-src needs it added
    # (the runtime's popup <style> carries the same nonce).
    assert response.headers["content-security-policy"] == direct.headers[
        "content-security-policy"
    ].replace("style-src 'self'", f"style-src 'self' 'nonce-{CSP_NONCE}'")
    assert f'<script nonce="{CSP_NONCE}" src="/__ss/r.js'.encode() in response.content


def test_meta_csp_gets_the_nonce(service: ServiceProcess, upstream: UpstreamServer) -> None:
    episode = service.create_episode(condition="Src-Exec", regime="multiple")
    with service.client(episode) as client:
        body = client.get(f"{upstream.origin}/csp-meta", headers=NAV).text
    nonce = body.split('<script nonce="')[1].split('"')[0]
    assert f"script-src &#x27;self&#x27; &#x27;nonce-{nonce}&#x27;" in body


def test_latin1_page_is_rewritten_in_latin1(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        response = client.get(f"{upstream.origin}/latin1", headers=NAV)
    assert "Caf\u00e9 cr\u00e8me".encode("latin-1") in response.content
    assert b">Log in</a>" in response.content


def test_large_binary_streams_through_unchanged(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with (
        service.client(episode) as client,
        client.stream("GET", f"{upstream.origin}/big.bin") as response,
    ):
        digest = hashlib.sha256()
        for chunk in response.iter_bytes():
            digest.update(chunk)
    assert digest.digest() == hashlib.sha256(BIG_BINARY).digest()


def test_no_304_for_a_shifted_page(service: ServiceProcess, upstream: UpstreamServer) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    mark = uuid.uuid4().hex  # finds this test's requests in the shared upstream's log
    with service.client(episode) as client:
        response = client.get(
            f"{upstream.origin}/etag?t={mark}", headers={**NAV, "If-None-Match": '"v1"'}
        )
        asset = client.get(
            f"{upstream.origin}/style.css?t={mark}",
            headers={"Sec-Fetch-Dest": "style", "If-None-Match": '"v1"'},
        )
    assert response.status_code == 200 and b">Log in</a>" in response.content
    assert "etag" not in response.headers and "last-modified" not in response.headers
    # A stylesheet is never rewritten: it streams through unchanged, validators and all.
    assert asset.status_code == 200 and asset.content == b"body{color:#333}"
    assert asset.headers["etag"] == '"v1"'
    sent = {
        request["path"].split("?")[0]: {k.lower(): v for k, v in request["headers"].items()}
        for request in upstream.requests
        if request["path"].endswith(f"?t={mark}")
    }
    assert "if-none-match" not in sent["/etag"]  # stripped: the page may be rewritten
    assert sent["/style.css"]["if-none-match"] == '"v1"'  # kept: a subresource never is


def test_chunked_html_is_rewritten(service: ServiceProcess, upstream: UpstreamServer) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        response = client.get(f"{upstream.origin}/chunked", headers=NAV)
    assert b">Log in</a>" in response.content and response.content.endswith(b"</html>")


def test_dead_upstream_gets_a_neutral_502_naming_it(service: ServiceProcess) -> None:
    episode = service.create_episode(condition="Src")
    port = free_port()
    with service.client(episode) as client:
        response = client.get(f"http://127.0.0.1:{port}/", headers=NAV)
        assert response.status_code == 502
        assert f"127.0.0.1:{port}" in response.text
        assert "mitmproxy" not in response.text.lower() + str(response.headers).lower()
        # ...and the proxy keeps serving.
        assert client.get(f"http://127.0.0.1:{port}/").status_code == 502


def test_contextual_shift_routes_to_the_target(
    service: ServiceProcess, upstream: UpstreamServer, target_upstream: UpstreamServer
) -> None:
    episode = service.create_episode(
        condition="Tgt", targets={upstream.origin: target_upstream.origin}
    )
    with service.client(episode) as client:
        response = client.get(f"{upstream.origin}/variant", headers=NAV)
        redirect = client.get(f"{upstream.origin}/redirect")
    assert b'<h1 id="title">target</h1>' in response.content
    assert target_upstream.origin.encode() not in response.content
    assert f'href="{upstream.origin}/style.css"'.encode() in response.content
    assert redirect.headers["location"] == f"{upstream.origin}/page.html"


def test_internal_endpoints_answer_on_any_origin(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src-Exec")
    seen = len(upstream.requests)
    with service.client(episode) as client:
        script = client.get(f"{upstream.origin}/__ss/r.js?v=1")
        elsewhere = client.get(f"http://127.0.0.1:{free_port()}/__ss/r.js")
        beacon = client.post(
            f"{upstream.origin}/__ss/b", content=b'{"k":"wrong","type":"popup_shown"}'
        )
    assert script.status_code == 200 and script.headers["content-type"].startswith(
        "text/javascript"
    )
    assert elsewhere.content == script.content
    assert beacon.status_code == 403
    assert len(upstream.requests) == seen


def test_redis_backed_service_records_events_in_redis(
    redis_service: ServiceProcess, upstream: UpstreamServer
) -> None:
    import redis

    from tests.conftest import redis_server  # noqa: F401  (fixture dependency is via redis_service)

    episode = redis_service.create_episode(condition="Src-Exec", regime="once")
    with redis_service.client(episode) as client:
        bodies = [client.get(f"{upstream.origin}/page.html", headers=NAV).text for _ in range(3)]
    assert sum("&quot;p&quot;:{" in body for body in bodies) == 1
    url = redis_service.args[redis_service.args.index("--redis-url") + 1]
    stream = redis.Redis.from_url(url).xrange(f"svc:ep:{episode['id']}:events")
    assert len(stream) == 1 + 3 + 1  # created, three pages, one popup


def test_dead_redis_fails_closed(workdir, upstream: UpstreamServer) -> None:  # type: ignore[no-untyped-def]
    service = ServiceProcess(workdir, "--redis-url", f"redis://127.0.0.1:{free_port()}/0").start()
    try:
        with httpx.Client(proxy=service.proxy) as client:
            response = client.get(
                f"{upstream.origin}/page.html", headers={"X-SkillShift-Episode": "e1"}
            )
        assert response.status_code == 503 and "store is unavailable" in response.text
        assert httpx.get(f"{service.api}/health").status_code == 503
        failed = httpx.post(f"{service.api}/episodes", json={})
        assert failed.status_code == 503 and failed.json()["status"] == 503
    finally:
        service.stop()


def test_allow_unbound_passes_bytes_through(workdir, upstream: UpstreamServer) -> None:  # type: ignore[no-untyped-def]
    service = ServiceProcess(workdir, "--allow-unbound").start()
    try:
        with httpx.Client(proxy=service.proxy) as client:
            for path in ("/page.html", "/encoded/br", "/big.bin"):
                direct = httpx.get(f"{upstream.origin}{path}", headers={"Accept-Encoding": "br"})
                proxied = client.get(f"{upstream.origin}{path}", headers={"Accept-Encoding": "br"})
                assert proxied.content == direct.content, path
    finally:
        service.stop()


def test_admin_api_and_unlisted_upstreams_are_unreachable(service: ServiceProcess) -> None:
    episode = service.create_episode(condition="Src")
    with service.client(episode) as client:
        api = client.get(f"{service.api}/episodes")
        outside = client.get("http://unlisted.example/")  # no DNS lookup happens either
    assert api.status_code == 403 and "not allowed" in api.text
    assert outside.status_code == 403 and "unlisted.example:80" in outside.text, outside.text


def test_finished_exchanges_are_collected_after_the_bytes_given(
    workdir,
    upstream: UpstreamServer,  # type: ignore[no-untyped-def]
) -> None:
    """A service told to collect after 1 MB of bodies runs a full collection by the second
    load of a 600 KB page (each served whole, its popup in it: buffered for its policy header's
    nonce; the next ones wait for the tenth of the time collections may take); with 0, never."""
    big = PAGE.replace(b"</body>", b"<p>" + b"x" * 600_000 + b"</p></body>")
    upstream.extra["/big-page.html"] = ("text/html; charset=utf-8", big)
    upstream.extra_headers["/big-page.html"] = {"Content-Security-Policy": "script-src 'self'"}
    for budget, expected in (("1000000", range(1, 4)), ("0", range(0, 1))):
        (workdir / budget).mkdir()
        service = ServiceProcess(workdir / budget, "--collect-after-bytes", budget).start()
        try:
            episode = service.create_episode(condition="Src-Exec", regime="multiple", seed=7)
            headers = {"X-SkillShift-Episode": str(episode["id"]), **NAV}
            with httpx.Client(proxy=service.proxy, timeout=20) as client:
                for _ in range(5):
                    page = client.get(f"{upstream.origin}/big-page.html", headers=headers)
                    assert page.status_code == 200 and b"/__ss/r.js?v=" in page.content
            assert service.counter("full_collections_total") in expected, budget
        finally:
            service.stop()


def test_a_streamed_upload_is_marked_and_guarded_as_any_request(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """A body over the rewrite limit is streamed: its headers go upstream before the hook that
    marks and checks a request runs. It is marked all the same, and one to the admin API (a
    HAR import takes 256 MB) is cut off before anything reaches it."""
    episode = service.create_episode(condition="Src")
    big = b"x" * (9 * 1024 * 1024)
    with service.client(episode) as client:
        posted = client.post(f"{upstream.origin}/upload", content=big)
        assert posted.status_code == 200 and b"9437184 bytes" in posted.content
        with pytest.raises(httpx.HTTPError):
            client.post(f"{service.api}/episodes/import?id=smuggled", content=big)
    (seen,) = [r for r in upstream.requests if r["path"] == "/upload"]
    assert {name.lower(): value for name, value in seen["headers"].items()}[
        "x-skillshift-proxied"
    ] == "1"
    assert httpx.get(f"{service.api}/episodes/smuggled").status_code == 404


def test_a_streamed_upload_of_a_tgt_episode_goes_to_the_target(
    service: ServiceProcess, upstream: UpstreamServer, target_upstream: UpstreamServer
) -> None:
    """Routed as the headers arrive: a streamed body's headers go upstream before the
    `request` hook runs (it went to the source's upstream)."""
    episode = service.create_episode(
        condition="Tgt", targets={upstream.origin: target_upstream.origin}
    )
    with service.client(episode) as client:
        posted = client.post(f"{upstream.origin}/tgt-upload", content=b"x" * (9 * 1024 * 1024))
    assert posted.status_code == 200 and b"9437184 bytes" in posted.content
    assert [r["path"] for r in target_upstream.requests if r["path"] == "/tgt-upload"]
    assert not [r for r in upstream.requests if r["path"] == "/tgt-upload"]


def test_a_tunnel_carries_http_or_nothing(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """Bytes in a CONNECT tunnel that do not look like HTTP at first (a request's first word
    alone in a packet) were passed on as raw TCP, where no hook runs: an unshifted page came
    back. They are read as HTTP, shifted, or refused."""
    import base64
    import socket

    episode = service.create_episode(condition="Src-Exec", regime="multiple", seed=7)
    credentials = base64.b64encode(f"{episode['id']}:{episode['token']}".encode()).decode()
    host = f"127.0.0.1:{upstream.server_address[1]}"
    with socket.create_connection(("127.0.0.1", service.proxy_port), timeout=20) as tunnel:
        tunnel.sendall(
            f"CONNECT {host} HTTP/1.1\r\nHost: {host}\r\n"
            f"Proxy-Authorization: Basic {credentials}\r\n\r\n".encode()
        )
        assert tunnel.recv(4096).startswith(b"HTTP/1.1 200")
        tunnel.sendall(b"GET")
        tunnel.sendall(
            f" /page.html HTTP/1.1\r\nHost: {host}\r\nSec-Fetch-Dest: document\r\n"
            "Sec-Fetch-Mode: navigate\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := tunnel.recv(65536):
            answer += chunk
    assert PAGE not in answer  # never the upstream's page as it is
    if answer.startswith(b"HTTP/1.1 200"):
        assert b"/__ss/r.js" in answer


def test_an_upload_of_no_declared_length_never_reaches_a_refused_upstream_or_a_replays(
    workdir,  # type: ignore[no-untyped-def]
    upstream: UpstreamServer,
) -> None:
    """A chunked body is buffered until it grows past the rewrite limit, then streamed with no
    hook between: its headers reached an upstream the guard refuses, and the upstream of an
    episode that replays. Such a request is decided as its headers arrive: cut off."""
    service = ServiceProcess(
        workdir, "--upstream-allow", "localhost", "--record-dir", str(workdir / "recordings")
    ).start()
    try:

        def chunks() -> Iterator[bytes]:  # no length: sent chunked
            for _ in range(9):
                yield b"x" * (1024 * 1024)

        allowed = f"http://localhost:{upstream.server_address[1]}"
        agent = service.create_episode(condition="Src", record="all")
        with service.client(agent) as client:
            assert client.get(f"{allowed}/page.html").status_code == 200
            with pytest.raises(httpx.HTTPError):  # 127.0.0.1 is not on the allow-list
                client.post(f"{upstream.origin}/refused-upload", content=chunks())
        replay = service.create_episode(replay_of=agent["id"])
        with service.client(replay) as client, pytest.raises(httpx.HTTPError):
            client.post(f"{allowed}/replayed-upload", content=chunks())
        assert not [r for r in upstream.requests if r["path"].endswith("-upload")]
    finally:
        service.stop()
