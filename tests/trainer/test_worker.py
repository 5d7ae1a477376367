import pytest

from trainer.tasks import ping


@pytest.mark.worker
def test_worker_process_runs_task_and_returns_result(celery_worker_process):
    result = ping.delay(value="pong")
    assert result.get(timeout=30) == "pong"
    assert "trainer.ping" in celery_worker_process.log()
