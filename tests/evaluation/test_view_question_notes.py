"""The question page shows the raters' notes on the question's answers (rater names to trainers only)."""

import pytest
from django.urls import reverse

from corpus.models import Answer, Question
from ratings.services import rating_note_set
from tests.evaluation.helpers import evaluate_inline
from trainer.services import import_rater

pytestmark = pytest.mark.django_db


def test_question_page_shows_notes_with_rater_to_trainers(client, trainer, builtin_ranker):
    run = evaluate_inline(builtin_ranker)
    question = Question.objects.get(external_id="q1")
    rating_note_set(
        rater=import_rater(),
        question=question,
        answer=Answer.objects.get(external_id="a5"),
        note="about a different aircraft",
    )
    client.force_login(trainer)

    response = client.get(reverse("evaluation:question", args=[run.pk, question.pk]))

    html = response.content.decode()
    assert 'data-testid="rater-notes"' in html
    assert "a5</strong> Turbulent layer · 2 stars by ground-truth:" in html
    assert "<q>about a different aircraft</q>" in html


def test_question_page_without_notes_has_no_notes_section(client, trainer, builtin_ranker):
    run = evaluate_inline(builtin_ranker)
    client.force_login(trainer)

    response = client.get(
        reverse("evaluation:question", args=[run.pk, Question.objects.get(external_id="q1").pk])
    )

    assert 'data-testid="rater-notes"' not in response.content.decode()
