import json
import re
from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import call_command

from corpus.models import Answer, Collection, Membership, Question, Role
from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from evaluation.numbers import figure
from rankers.models import Ranker
from raters.models import CandidateTable
from raters.next_task.table import table_state
from ratings.models import Label
from trainer.management.commands.bootstrap_demo import PASSWORD_ALPHABET, demo_password


def test_bootstrap_demo_twice_creates_nothing_twice_evaluates_once_and_prints_same_logins(
    db, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.VAR_DIR = tmp_path
    first, second = StringIO(), StringIO()
    with django_capture_on_commit_callbacks(execute=True):  # what follows each commit, as in `make run`
        call_command("bootstrap_demo", "--url", "http://127.0.0.1:8000/", stdout=first)
    # The load queued the rating queue's first candidate table, for the demo as it stands after its
    # evaluation: the worker builds it at once, so a first rater finds it (no click builds it).
    table = CandidateTable.objects.select_related("collection").get()
    assert (table.status, table.built_at, table.wanted == table_state(collection=table.collection)) == (
        "queued",
        None,
        True,
    )
    call_command("bootstrap_demo", "--url", "http://127.0.0.1:8000/", stdout=second)
    assert (
        Collection.objects.count(),
        Answer.objects.count(),
        Question.objects.count(),
        Label.objects.count(),
    ) == (1, 1400, 150, 1197)
    assert Ranker.objects.filter(is_default=True).count() == 1
    credentials = json.loads((tmp_path / "demo-credentials.json").read_text())
    for username, role in (("trainer", Role.TRAINER), ("rater", Role.RATER)):
        assert f"{username} / {credentials[username]}" in first.getvalue()
        assert f"{username} / {credentials[username]}" in second.getvalue()
        user = get_user_model().objects.get(username=username)
        assert user.check_password(credentials[username])
        assert Membership.objects.get(user=user).role == role
    assert "http://127.0.0.1:8000/" in first.getvalue()
    assert "Loaded demo collection" in first.getvalue()
    assert "Loaded demo collection" not in second.getvalue()
    # The champion was evaluated once, here, on the 57 test questions: the dashboard opens on a headline.
    run = EvaluationRun.objects.get()
    assert (run.status, run.trigger, run.ranker.is_default, run.questions_done, run.questions_failed) == (
        RunStatus.SUCCEEDED,
        RunTrigger.VERSION,
        True,
        57,
        0,
    )
    assert run.ranker_version.label == "v1"
    evaluated = (
        f"Evaluated Built-in ranker version v1 on 57 test questions: NDCG@10 {figure(run.ndcg_mean)} ("
    )
    assert evaluated in first.getvalue()
    assert "Evaluated" not in second.getvalue()
    assert first.getvalue().index(evaluated) < first.getvalue().index("Rank Trainer is starting at")


def test_demo_password_is_letters_and_digits_so_never_starts_with_a_dash():
    # By construction (the alphabet), and over draws: with token_urlsafe, 1 in 64 started with "-".
    assert PASSWORD_ALPHABET == "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    passwords = [demo_password() for _ in range(2000)]
    assert all(re.fullmatch(r"[A-Za-z0-9]{12}", password) for password in passwords)
    assert len(set(passwords)) == 2000


def test_bootstrap_demo_no_logins_prints_no_password_but_keeps_them(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("bootstrap_demo", "--no-logins", stdout=out)
    credentials = json.loads((tmp_path / "demo-credentials.json").read_text())
    assert sorted(credentials) == ["rater", "trainer"]
    printed = out.getvalue()
    assert printed.startswith(
        "Loaded demo collection Cranfield (demo)\nEvaluated Built-in ranker version v1 on 57"
    )
    assert credentials["rater"] not in printed and credentials["trainer"] not in printed
    assert get_user_model().objects.get(username="rater").check_password(credentials["rater"])


def test_bootstrap_demo_rewords_the_former_description_for_raters(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("bootstrap_demo", stdout=StringIO())
    former = (
        "Cranfield 1400 aeronautics abstracts and 150 questions, as IBM Watson Retrieve and Rank's "
        "tutorial shipped them. Grades 0–4 mapped to stars = max(grade − 1, 0)."
    )
    Collection.objects.filter(slug="cranfield").update(description=former)

    call_command("bootstrap_demo", stdout=StringIO())

    assert Collection.objects.get(slug="cranfield").description == (
        "Questions about aircraft and airflow, with summaries of 1,400 aeronautics papers as answers "
        "(the Cranfield collection, as IBM Watson Retrieve and Rank's tutorial shipped it)."
    )
