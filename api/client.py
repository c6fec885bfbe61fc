"""The Python client of the admin API, under its historical name.

The code lives once, in the `skillshift-client` distribution (clients/python/skillshift_client),
which the proxy's distribution ships too; `from api.client import SkillShift` keeps working,
also from a checkout put on PYTHONPATH in an environment where neither is installed.
"""

import sys
from pathlib import Path

try:
    import skillshift_client
except ModuleNotFoundError:  # a bare checkout on PYTHONPATH: its own copy of the client
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python"))
    import skillshift_client

DEFAULT_API_URL = skillshift_client.DEFAULT_API_URL
EVENTS_PAGE = skillshift_client.EVENTS_PAGE
AsyncSkillShift = skillshift_client.AsyncSkillShift
Episode = skillshift_client.Episode
SkillShift = skillshift_client.SkillShift
SkillShiftError = skillshift_client.SkillShiftError

__all__ = [
    "DEFAULT_API_URL",
    "EVENTS_PAGE",
    "AsyncSkillShift",
    "Episode",
    "SkillShift",
    "SkillShiftError",
]
