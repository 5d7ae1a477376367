"""One definition of "can the broker be reached now": every service that queues a job and /healthz use
``jobs.broker.broker_check``, so they agree on what "down" means and how long they wait."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.test_layers import LAYERS, ROOT


def test_only_jobs_broker_opens_a_broker_connection_to_check_it():
    checking = sorted(
        str(path.relative_to(ROOT))
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if "ensure_connection(" in path.read_text()
    )
    assert checking == [str(Path("jobs") / "broker.py")]
