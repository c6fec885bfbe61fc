"""A real headless Chromium (Debian's) through the real service, via Playwright."""

from __future__ import annotations

import shlex
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser

from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS
from tests.helpers.pages import RELABEL_ONLY
from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess
from tests.helpers.tls import make_upstream_tls
from tests.helpers.upstream import PAGE, UpstreamServer

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def tls_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UpstreamServer, Path]]:
    ca, cert, key = make_upstream_tls(tmp_path_factory.mktemp("tls"))
    server = UpstreamServer("secure", tls=(cert, key)).start()
    yield server, ca
    server.stop()


def test_proxy_credentials_bind_chromium_and_the_popup_reports(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(
        condition="Src-Exec",
        regime="multiple",
        seed=3,
        shift_params={"popup": {"kinds": ["newsletter"]}},
    )
    context = browser.new_context(proxy=episode["proxy"])  # type: ignore[arg-type]
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    response = page.goto(f"{upstream.origin}/page.html")
    assert response is not None and response.status == 200
    dialog = page.get_by_role("dialog")
    dialog.wait_for(state="visible", timeout=5000)
    assert dialog.get_attribute("aria-modal") == "true"
    # The overlay swallows a click on the page underneath.
    page.mouse.click(5, 5)
    page.get_by_role("button", name="No thanks").click()
    dialog.wait_for(state="detached", timeout=5000)
    page.get_by_role("link", name="Sign in").click(timeout=5000)  # the page works again
    events = service.wait_for_events(
        str(episode["id"]), {"popup_shown", "popup_dismissed", "blocked_interaction"}
    )
    by_type = {str(event["type"]): event for event in events}
    assert by_type["popup_dismissed"]["how"] == "decline"
    assert by_type["blocked_interaction"]["input"] == "click"
    assert by_type["popup_shown"]["source"] == "client"
    assert "skillshift" not in page.content().lower()
    assert errors == []
    context.close()


def test_a_page_of_no_type_chromium_renders_is_the_episodes(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """Chromium sniffs a body of no Content-Type and renders it as HTML: it was passed on
    unshifted, no popup in a popup episode."""
    upstream.extra["/untyped.html"] = ("", PAGE)
    episode = service.create_episode(
        condition="Src-Exec", regime="multiple", shift_params={"popup": {"kinds": ["newsletter"]}}
    )
    context = browser.new_context(proxy=episode["proxy"])  # type: ignore[arg-type]
    page = context.new_page()
    response = page.goto(f"{upstream.origin}/untyped.html")
    assert response is not None and "content-type" not in response.headers
    page.get_by_role("dialog").wait_for(state="visible", timeout=5000)
    context.close()


def test_header_binding_and_escape_dismisses(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src-Exec", regime="multiple")
    context = browser.new_context(
        proxy={"server": service.proxy},
        extra_http_headers=dict(episode["header"]),  # type: ignore[call-overload]
    )
    page = context.new_page()
    page.goto(f"{upstream.origin}/page.html")
    page.get_by_role("dialog").wait_for(state="visible", timeout=5000)
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="detached", timeout=5000)
    events = service.wait_for_events(str(episode["id"]), {"popup_dismissed"})
    assert [e["how"] for e in events if e["type"] == "popup_dismissed"] == ["escape"]
    context.close()


def test_runtime_runs_under_a_strict_dynamic_csp(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src-Exec", regime="multiple")
    context = browser.new_context(proxy=episode["proxy"])  # type: ignore[arg-type]
    page = context.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.goto(f"{upstream.origin}/csp")
    page.get_by_role("dialog").wait_for(state="visible", timeout=5000)
    assert page.evaluate("window.own") == 1  # the page's own nonce'd script still runs
    assert violations == []
    context.close()


def test_src_in_chromium_is_untouched(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(condition="Src")
    context = browser.new_context(proxy=episode["proxy"])  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(f"{upstream.origin}/page.html")
    assert page.locator("script").count() == 0
    assert page.get_by_role("link", name="Sign in").count() == 1
    context.close()


def test_https_through_the_interception_ca(
    browser: Browser, tmp_path: Path, tls_upstream: tuple[UpstreamServer, Path]
) -> None:
    server, lab_ca = tls_upstream
    service = ServiceProcess(tmp_path, "--upstream-ca", str(lab_ca)).start()
    try:
        episode = service.create_episode(**RELABEL_ONLY)
        context = browser.new_context(proxy=episode["proxy"], ignore_https_errors=True)  # type: ignore[arg-type]
        page = context.new_page()
        page.goto(f"{server.origin}/page.html")
        assert page.get_by_role("link", name="Log in").count() == 1
        # Chromium speaks HTTP/2 to the proxy inside the tunnel; the page is shifted all the same.
        protocol = "performance.getEntriesByType('navigation')[0].nextHopProtocol"
        assert page.evaluate(protocol) == "h2"
        context.close()
        # A client that trusts the proxy's CA (from the API) verifies the intercepted chain.
        ca = httpx.get(f"{service.api}/ca").json()
        ca_file = tmp_path / "proxy-ca.pem"
        ca_file.write_text(ca["pem"])
        proxy_url = f"http://{episode['id']}:{episode['token']}@127.0.0.1:{service.proxy_port}"
        verify = ssl.create_default_context(cafile=str(ca_file))
        with httpx.Client(proxy=proxy_url, verify=verify) as client:
            response = client.get(f"{server.origin}/page.html")
        assert response.status_code == 200 and b">Log in</a>" in response.content
        assert len(ca["spki_sha256"]) == 44
    finally:
        service.stop()


def test_runtime_shifts_dom_rendered_after_load(
    browser: Browser, service: ServiceProcess, upstream: UpstreamServer
) -> None:
    episode = service.create_episode(
        condition="Src-Perc",
        shifts=["relabel", "locator_drift"],
        # The site's (generic) vocabulary maps "Log in" back to "Sign in": the reverse pair.
        shift_params={"relabel": {"vocabulary": {"Sign in": ["Log in"]}}},
    )
    context = browser.new_context(proxy=episode["proxy"])  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(f"{upstream.origin}/dynamic")
    late = page.locator("#late")
    late.wait_for(state="attached", timeout=5000)
    page.wait_for_timeout(600)  # past the framework's second render
    # Relabeled once, not flipped back by the reverse pair, and the test hook is gone.
    assert late.text_content() == "Log in"
    assert late.get_attribute("data-testid") is None
    assert page.get_by_role("link", name="Log in").count() == 1  # server-side relabel
    context.close()


def test_a_desktop_default_never_captures_an_agents_browser(
    browser: Browser, tmp_path: Path, upstream: UpstreamServer
) -> None:
    """Two real Chromium contexts at once: a desktop browser on its own listener, bound by
    that listener's default, and an agent with proxy credentials on the agents' listener.
    Each one's pages are served and logged under its own episode, and the agents' listener
    refuses a default outright."""
    desktop_port = free_port()
    service = ServiceProcess(tmp_path, "--desktop-proxy", f"127.0.0.1:{desktop_port}").start()
    try:
        desktop = service.create_episode(condition="Src")
        agent = service.create_episode(condition="Src")
        refused = httpx.put(
            f"{service.api}/listeners/{service.proxy_port}",
            json={"default_episode": desktop["id"]},
        )
        assert refused.status_code == 409, refused.text
        assert (
            httpx.put(
                f"{service.api}/listeners/{desktop_port}", json={"default_episode": desktop["id"]}
            ).status_code
            == 200
        )
        desktop_context = browser.new_context(
            proxy={"server": f"http://127.0.0.1:{desktop_port}"}  # no credentials at all
        )
        agent_context = browser.new_context(proxy=agent["proxy"])  # type: ignore[arg-type]
        desktop_page, agent_page = desktop_context.new_page(), agent_context.new_page()
        for path in ("/page.html", "/login", "/page.html"):
            assert agent_page.goto(f"{upstream.origin}{path}").status == 200  # type: ignore[union-attr]
            assert desktop_page.goto(f"{upstream.origin}/page.html").status == 200  # type: ignore[union-attr]
        desktop_context.close()
        agent_context.close()

        def served(episode: dict[str, object]) -> list[str]:
            events = service.events(str(episode["id"]))
            return [str(e["url"]) for e in events if e["type"] == "page_served"]

        assert [url.rsplit("/", 1)[1] for url in served(agent)] == [
            "page.html",
            "login",
            "page.html",
        ]
        assert [url.rsplit("/", 1)[1] for url in served(desktop)] == ["page.html"] * 3
    finally:
        service.stop()


def test_an_unverifiable_upstream_gets_the_neutral_page_over_http1_and_http2(
    browser: Browser, tmp_path: Path, tls_upstream: tuple[UpstreamServer, Path]
) -> None:
    """A self-signed upstream without --upstream-ca: a 502 that names the upstream and never
    the proxy software, whichever HTTP version the client speaks."""
    server, _ = tls_upstream
    service = ServiceProcess(tmp_path).start()
    try:
        episode = service.create_episode(condition="Src")
        proxy_url = f"http://{episode['id']}:{episode['token']}@127.0.0.1:{service.proxy_port}"
        with httpx.Client(proxy=proxy_url, verify=False) as client:  # HTTP/1.1 in the tunnel
            response = client.get(f"{server.origin}/page.html")
        assert response.status_code == 502
        assert "mitmproxy" not in (response.text + str(response.headers)).lower()
        assert f"{server.port}" in response.text
        context = browser.new_context(proxy=episode["proxy"], ignore_https_errors=True)  # type: ignore[arg-type]
        page = context.new_page()
        answer = page.goto(f"{server.origin}/page.html")
        assert answer is not None and answer.status == 502
        assert page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol") == (
            "h2"
        )
        assert "mitmproxy" not in (page.content() + str(answer.headers)).lower()
        context.close()
    finally:
        service.stop()


BINDING_DOCS = Path(__file__).resolve().parents[2] / "docs" / "binding.md"


def docs_desktop_chromium() -> list[str]:
    """The arguments of the Chromium command in the docs' desktop-browser paragraph."""
    text = BINDING_DOCS.read_text(encoding="utf-8")
    section = text[text.index("**A desktop browser**") :]
    start = section.index("\nchromium ") + 1
    lines = []
    for line in section[start:].splitlines():
        lines.append(line.rstrip("\\ "))
        if not line.endswith("\\"):
            break
    return shlex.split(" ".join(lines))[1:]


def test_the_docs_desktop_chromium_sees_the_shifted_page(
    browser: Browser, tmp_path: Path, upstream: UpstreamServer
) -> None:
    """The docs' raw Chromium flags, pointed at a desktop listener whose default is a
    relabelling episode: the page is the shifted one. Without `--proxy-bypass-list=<-loopback>`
    Chromium loads the loopback upstream directly, unshifted (which is why the docs say
    so)."""
    flags = docs_desktop_chromium()
    assert "--proxy-server=http://127.0.0.1:8082" in flags
    assert "--proxy-bypass-list=<-loopback>" in flags
    desktop_port = free_port()
    service = ServiceProcess(tmp_path, "--desktop-proxy", f"127.0.0.1:{desktop_port}").start()
    try:
        episode = service.create_episode(**RELABEL_ONLY)
        default = {"default_episode": episode["id"]}
        assert httpx.put(f"{service.api}/listeners/{desktop_port}", json=default).is_success
        proxy = f"--proxy-server=http://127.0.0.1:{desktop_port}"
        proxied = [proxy if flag.startswith("--proxy-server=") else flag for flag in flags]
        # The proxy flags: Playwright gives every launch a fresh profile, and HTTP needs no CA.
        proxied = [flag for flag in proxied if flag.startswith("--proxy")]
        for args, shifted in ((proxied, True), ([proxy], False)):
            chromium = browser.browser_type.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *args]
            )
            try:
                page = chromium.new_page()
                assert page.goto(f"{upstream.origin}/login").status == 200  # type: ignore[union-attr]
                assert page.get_by_role("link", name="Log in").count() == int(shifted), args
            finally:
                chromium.close()
        served = [e for e in service.events(str(episode["id"])) if e["type"] == "page_served"]
        assert len(served) == 1  # the load without the bypass list never reached the proxy
    finally:
        service.stop()


@pytest.mark.parametrize(
    ("path", "rendered"),
    [("/redoc", "h1:has-text('skillshift admin API')"), ("/docs", ".swagger-ui .info .title")],
)
def test_the_api_docs_load_nothing_from_elsewhere(
    browser: Browser, service: ServiceProcess, path: str, rendered: str
) -> None:
    """ReDoc and Swagger UI render, and every request Chromium makes for them is to the API
    itself (ReDoc's sidebar logo came from its vendor's CDN)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        assert page.goto(f"{service.api}{path}").status == 200  # type: ignore[union-attr]
        page.wait_for_selector(rendered)
        page.wait_for_load_state("networkidle")
        own = (service.api, f"blob:{service.api}", "data:")
        assert [url for url in requested if not url.startswith(own)] == []
        assert any(url.endswith("/openapi.json") for url in requested)
    finally:
        context.close()
