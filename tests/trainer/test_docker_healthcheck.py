"""docker-compose: the image builds from the top-level Dockerfile, and the web healthcheck's own
command passes against a real gunicorn running with production settings (DEBUG=0, ALLOWED_HOSTS,
SECURE_SSL_REDIRECT)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import yaml

from tests.servers import free_port
from tests.trainer.gunicorn_support import PRODUCTION, ROOT, clean_env, gunicorn

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def healthcheck_command() -> list[str]:
    """The web service's healthcheck test, as the container runs it (`python` is this interpreter)."""
    test = COMPOSE["services"]["web"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    return [sys.executable if part == "python" else part for part in test[1:]]


def run_healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        healthcheck_command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
    )


@pytest.fixture
def production_server(tmp_path):
    env = clean_env(
        **PRODUCTION, DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3", RANK_TRAINER_VAR_DIR=str(tmp_path)
    )
    with gunicorn(env, tmp_path / "gunicorn.log") as port:
        yield env, port


def test_healthcheck_passes_against_gunicorn_with_production_settings(production_server):
    env, port = production_server
    result = run_healthcheck({**env, "HEALTHCHECK_URL": f"http://127.0.0.1:{port}/healthz"})
    assert (result.returncode, result.stderr) == (0, "")


def test_healthcheck_fails_in_one_line_when_host_not_allowed(production_server):
    env, port = production_server
    result = run_healthcheck(
        {**env, "ALLOWED_HOSTS": "other.example.com", "HEALTHCHECK_URL": f"http://127.0.0.1:{port}/healthz"}
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"unhealthy: http://127.0.0.1:{port}/healthz (Host: other.example.com) answered 400: "
    )
    assert result.stderr.count("\n") == 1


def test_healthcheck_fails_in_one_line_when_server_down():
    port = free_port()
    result = run_healthcheck(clean_env(**PRODUCTION, HEALTHCHECK_URL=f"http://127.0.0.1:{port}/healthz"))
    assert result.returncode == 1
    assert result.stderr == f"unhealthy: http://127.0.0.1:{port}/healthz: [Errno 111] Connection refused\n"


def test_compose_builds_from_top_level_dockerfile():
    for service in ("web", "worker", "beat"):
        assert COMPOSE["services"][service]["build"] == "."
    assert "dockerfile_inline" not in (ROOT / "docker-compose.yml").read_text()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.splitlines()[1] == "FROM python:3.11-slim"
    assert "collectstatic --noinput" in dockerfile


def compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_compose_config_validates(tmp_path):
    command = compose_command()
    # make test installs Debian's docker-compose (make browser-deps); a missing one is a failure, not a skip.
    assert command is not None, "neither `docker compose` nor `docker-compose` is installed"
    for name in ("docker-compose.yml", "Dockerfile"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")  # env_file: .env, as the README says
    result = subprocess.run(
        [*command, "config", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stderr) == (0, "")
