"""What the admin page says a Tgt episode routes to, before creating it (POST /ui/routing)."""

from __future__ import annotations

import sites
from api.service.settings import Settings
from tests.unit.api.conftest import in_process

OWN = "http://127.0.0.1:8081"
PAGE = {"X-SkillShift-UI": "1", "Origin": OWN}  # the page's own requests (with its session)


async def test_routes_are_the_episodes_the_profiles_and_the_deployments() -> None:
    deployment = {"http://src.test:1": "http://deployed.test:2"}
    async with in_process(Settings(targets=tuple(deployment.items())), base_url=OWN) as api:
        await api.get("/ui")  # the page's session
        own = {"http://own.test:3/": "http://own-target.test:4"}
        matched = await api.post("/ui/routing", json={"targets": own}, headers=PAGE)
        assert matched.status_code == 200, matched.text
        # Matched by page: no profile's targets, only the episode's and the deployment's.
        assert matched.json() == {
            "routes": {**deployment, "http://own.test:3": "http://own-target.test:4"}
        }
        pinned = await api.post("/ui/routing", json={"site": "gitlab"}, headers=PAGE)
        assert pinned.json()["routes"] == {**sites.PROFILES["gitlab"].targets, **deployment}


async def test_a_bad_origin_is_refused_as_episode_creation_refuses_it() -> None:
    async with in_process(Settings(), base_url=OWN) as api:
        await api.get("/ui")
        refused = await api.post("/ui/routing", json={"targets": {"ftp:x": "y"}}, headers=PAGE)
        assert refused.status_code == 422
        assert refused.json() == {
            "error": "targets: 'ftp:x' is not an origin like http://host:port",
            "status": 422,
        }
