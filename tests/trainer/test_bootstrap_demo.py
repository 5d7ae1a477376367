import json
from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import call_command

from corpus.models import Answer, Collection, Membership, Question, Role
from rankers.models import Ranker
from ratings.models import Label


def test_bootstrap_demo_twice_creates_nothing_twice_and_prints_same_logins(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first, second = StringIO(), StringIO()
    call_command("bootstrap_demo", "--url", "http://127.0.0.1:8000/", stdout=first)
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
