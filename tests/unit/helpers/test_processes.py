import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import REPO

# A Python that makes a scratch directory, fills it, prints where, and ends as told.
_PROGRAM = """
import sys
from tests.helpers.processes import scratch_directory
path = scratch_directory("scratch-test-")
(path / "logs").mkdir()
(path / "logs" / "service.log").write_text("a line")
print(path, flush=True)
if sys.argv[1] == "raise":
    raise RuntimeError("the run failed")
"""


@pytest.mark.parametrize("ending", ["return", "raise"])
def test_a_scratch_directory_is_gone_when_its_python_ends(ending: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, ending], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == (0 if ending == "return" else 1), done.stderr
    path = Path(done.stdout.strip())
    assert path.name.startswith("scratch-test-")
    assert not path.exists()
