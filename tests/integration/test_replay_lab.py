"""A replay of the lab's React and Vue starters gives the same document as the agent's browser
had, after load and after each step of the scripted task, in 10 of 10 replays, with the app
stopped: each replay in a fresh browser context, answered from the recording alone.

The agent runs the app's scripted task (tests/helpers/lab_react.py: three clicks on the counter;
lab_vue.py: the router from Home to About and back, then a deep link to /about) under
`Src-Perc` through a service with a record directory (`record: "all"`, the default). Its
documents (`document.documentElement.outerHTML`, compared as they are: nothing is normalised)
are taken at each checkpoint of the task, once that step's expectations hold.

`Src-Perc` (the benchmark's drift) so the documents are the service's, not the app's alone: a
wrapper element around the app's root, and the runtime script (which watches what the app
renders) configured with the recorded episode's own beacon key: a replay that fetched or
shifted a page anew would not give them. (`Src-Exec`, a popup on every load, gave 10 of 10 as
well when tried; its replay is proven on the lab WordPress in
tests/integration/test_recording.py, and ten more replays per app would double this test.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.helpers.lab import APPS, LabApp, lab_app
from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser
REPLAYS = 10
DOM = "() => document.documentElement.outerHTML"
# What a replay reports when it could not answer from the recording as it was.
REPLAY_TROUBLE = {"replay_miss", "replay_error", "replay_substituted"}


@dataclass
class Run:
    """One run of the scripted task: the document at each step, and what went wrong."""

    episode: dict[str, Any]
    documents: list[tuple[str, str]] = field(default_factory=list)  # (step, outerHTML)
    page_errors: list[str] = field(default_factory=list)
    failure: str | None = None


def run_task(browser: Browser, app: LabApp, url: str, episode: dict[str, Any]) -> Run:
    """The app's scripted task in a fresh context bound to `episode`, the document taken at
    each of its checkpoints."""
    run = Run(episode)
    context = browser.new_context(proxy=episode["proxy"], viewport={"width": 1280, "height": 900})
    # The first load of a page under Src-Perc in a fresh service waits for the page to be
    # learnt (seconds on a busy machine): expectations wait as long as actions do.
    context.set_default_timeout(15_000)
    expect.set_options(timeout=15_000)
    page = context.new_page()
    page.on("pageerror", lambda error: run.page_errors.append(str(error)))

    def checkpoint(step: str) -> None:
        run.documents.append((step, page.evaluate(DOM)))

    try:  # (no popups to dismiss under Src-Perc)
        app.task(page, url, {"LAB_URL": url}, lambda page: 0, checkpoint)
    except Exception as failure:  # a replay that breaks the task is a difference like any other
        run.failure = f"{type(failure).__name__}: {failure}"[:600]
    finally:
        context.close()
    return run


@pytest.fixture(scope="module")
def recording_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    workdir = tmp_path_factory.mktemp("replay-lab-service")
    process = ServiceProcess(workdir, "--record-dir", str(workdir / "recordings")).start()
    yield process
    process.stop()


@pytest.fixture(scope="module", params=["react", "vue"])
def recorded(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    browser: Browser,
    recording_service: ServiceProcess,
) -> tuple[LabApp, str, Run]:
    """One app's scripted task recorded under Src-Perc; then the app is stopped, so whatever
    its replays get can only come from the recording."""
    app = APPS[request.param]
    with lab_app(app.script, tmp_path_factory.mktemp(app.name), *app.args) as env:
        url = env["LAB_URL"]
        run = run_task(browser, app, url, recording_service.create_episode(condition="Src-Perc"))
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)
    assert run.failure is None and run.page_errors == [], (run.failure, run.page_errors)
    # The HAR is read behind every write queued so far: the recording is complete.
    httpx.get(f"{recording_service.api}/episodes/{run.episode['id']}/har", timeout=30)
    return app, url, run


def first_difference(one: str, other: str) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b),
        min(len(one), len(other)),
    )
    return f"at {at}: {one[max(0, at - 80) : at + 80]!r} vs {other[max(0, at - 80) : at + 80]!r}"


def how_it_differs(
    recorded: Run, replayed: Run, events: list[dict[str, Any]], loads: list[int]
) -> str | None:
    """None for a replay that gave the recorded document at every step and answered every
    request from the recording; else the first thing that differs."""
    if replayed.failure or replayed.page_errors:
        return f"the task failed: {replayed.failure}; page errors: {replayed.page_errors}"
    trouble = [event for event in events if event["type"] in REPLAY_TROUBLE]
    if trouble:
        return f"not answered from the recording: {trouble}"
    served = [event["replayed_load"] for event in events if event["type"] == "page_served"]
    if served != loads:
        return f"replayed loads {served}, recorded {loads}"
    steps = [step for step, _ in recorded.documents]
    if [step for step, _ in replayed.documents] != steps:
        return f"steps {[step for step, _ in replayed.documents]}, recorded {steps}"
    for (step, original), (_, again) in zip(recorded.documents, replayed.documents, strict=True):
        if again != original:
            return f"{step}: {first_difference(original, again)}"
    return None


def test_ten_replays_give_the_recorded_document_at_every_step(
    browser: Browser, recording_service: ServiceProcess, recorded: tuple[LabApp, str, Run]
) -> None:
    app, url, original = recorded
    documents = [document for _, document in original.documents]
    # Every step changed the page (a click, a route, a load): the documents compared are the
    # app's behaviour, not one static page taken again and again.
    assert all(a != b for a, b in zip(documents, documents[1:], strict=False)), original.documents
    pages = httpx.get(
        f"{recording_service.api}/episodes/{original.episode['id']}/pages", timeout=10
    ).json()["pages"]
    loads = [page["load"] for page in pages]
    # The task's document loads, each recorded as a page (React: one; Vue: two).
    assert loads == list(range(1, len(loads) + 1)) and loads, pages

    outcomes = []
    for _ in range(REPLAYS):
        replay = recording_service.create_episode(replay_of=original.episode["id"])
        replayed = run_task(browser, app, url, replay)
        events = recording_service.events(str(replay["id"]))
        outcomes.append(how_it_differs(original, replayed, events, loads))
    same = outcomes.count(None)
    assert same == REPLAYS, (
        f"{same} of {REPLAYS} replays of {app.name} gave the recorded "
        f"documents; the first that did not: {next(o for o in outcomes if o)}"
    )
