"""Test distribution over the workers (pytest-xdist, ``--dist loadgroup`` in ``pyproject.toml``).

Each file stays on one worker, its tests in order — a notebook's cells run as one kernel's session, and
many modules share a module-scoped fixture (a real server, a Hub) — except the files named in
``SPREAD``: their tests are independent gradings (one wrong answer on 20 seeds each) and are the
suite's longest files, so they are spread test by test over every worker instead of making one worker
the last to finish.
"""

from __future__ import annotations

import pytest

SPREAD = ("tests/test_generalize_",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if not path.startswith(SPREAD):
            item.add_marker(pytest.mark.xdist_group(path))
