"""gunicorn's workers warm up before their first request (gunicorn.conf.py's ``post_worker_init``,
config/warmup.py): the URLconf and every view imported, and the objects that live as long as the process
moved out of the garbage collector's sight."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.trainer.gunicorn_support import PRODUCTION, ROOT, clean_env

# In a fresh interpreter, as a gunicorn worker is: Django set up, the app loaded (config.wsgi), then the
# config's hook called as gunicorn calls it.
WORKER = """
import gc, json, runpy, sys
import config.wsgi
from django.urls import get_resolver
before = {"views": "api.views_ratings" in sys.modules, "frozen": gc.get_freeze_count()}
runpy.run_path("gunicorn.conf.py")["post_worker_init"](None)
resolver = get_resolver()
after = {
    "views": "api.views_ratings" in sys.modules and "raters.views" in sys.modules,
    "frozen": gc.get_freeze_count(),
    "resolver": "url_patterns" in resolver.__dict__ and resolver._populated,
}
print(json.dumps({"before": before, "after": after}))
"""


def test_post_worker_init_imports_the_views_and_freezes_what_the_worker_holds(tmp_path):
    env = clean_env(**PRODUCTION, RANK_TRAINER_VAR_DIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-c", WORKER], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    state = json.loads(run.stdout.strip().splitlines()[-1])

    assert state["before"] == {"views": False, "frozen": 0}
    assert state["after"]["views"] is True
    assert state["after"]["resolver"] is True
    # Django and the app's modules: well over 50,000 objects (about 150,000 measured).
    assert state["after"]["frozen"] > 50_000
