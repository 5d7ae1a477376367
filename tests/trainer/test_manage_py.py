"""manage.py from a fresh checkout: commands that sign nothing run without SECRET_KEY, and a settings
error is one line naming the variable, never a traceback."""

from __future__ import annotations

import pytest

from tests.trainer.test_settings import ROOT, run

QRELS = str(ROOT / "tests" / "data" / "trec_eval" / "qrels.test")
RESULTS = str(ROOT / "tests" / "data" / "trec_eval" / "results.test")
EXPECTED_SCORE = "ndcg_cut_10           \tall\t0.3016\nsuccess_5             \tall\t0.3333\n"


def test_manage_score_runs_without_secret_key_or_debug(tmp_path):
    result = run({"RANK_TRAINER_VAR_DIR": str(tmp_path)}, args=("manage.py", "score", QRELS, RESULTS))
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(EXPECTED_SCORE)
    assert result.stderr == ""


def test_manage_score_output_same_as_with_secret_key(tmp_path):
    env = {"RANK_TRAINER_VAR_DIR": str(tmp_path)}
    without = run(env, args=("manage.py", "score", QRELS, RESULTS))
    with_key = run({**env, "SECRET_KEY": "x" * 50}, args=("manage.py", "score", QRELS, RESULTS))
    assert without.stdout == with_key.stdout


def test_manage_runserver_without_secret_key_fails_in_one_line(tmp_path):
    result = run({"RANK_TRAINER_VAR_DIR": str(tmp_path)}, args=("manage.py", "runserver", "--noreload"))
    assert result.returncode == 1
    assert result.stderr == "error: SECRET_KEY is required but not set\n"


def test_manage_command_that_signs_without_secret_key_fails_in_one_line(tmp_path):
    code = "from django.core import signing; signing.dumps(1)"
    result = run({"RANK_TRAINER_VAR_DIR": str(tmp_path)}, args=("manage.py", "shell", "-c", code))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "error: SECRET_KEY is required by 'shell' but not set (or set DEBUG=1 for development)"
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "flase"}, "error: DEBUG='flase' is not a boolean (use 1/0, true/false, yes/no, on/off)"),
        (
            {"DEBUG": "1", "DATABASE_URL": "mysql://db/x"},
            "error: DATABASE_URL='mysql://db/x': scheme 'mysql' is not supported (postgres:// or sqlite://)",
        ),
        ({"DEBUG": "1", "EVALUATION_CHUNK_SIZE": "0"}, "error: EVALUATION_CHUNK_SIZE='0' must be at least 1"),
        (
            {"DEBUG": "1", "REDIS_URL": "localhost"},
            "error: REDIS_URL='localhost' is not a redis:// or rediss:// URL with a host",
        ),
    ],
)
def test_manage_settings_error_is_one_line_naming_the_variable(tmp_path, env, message):
    result = run({**env, "RANK_TRAINER_VAR_DIR": str(tmp_path)}, args=("manage.py", "score", QRELS, RESULTS))
    assert result.returncode == 1
    assert result.stderr == message + "\n"


def test_server_import_without_secret_key_still_fails():
    """gunicorn and celery load the settings without manage.py: no SECRET_KEY, no start."""
    result = run({"DEBUG": "0"}, code="import django; django.setup()")
    assert result.returncode != 0
    assert "SECRET_KEY is required but not set" in result.stderr
