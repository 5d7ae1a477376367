"""The solr preset against a real Solr 9.10 node (tests/rankers/real_engines.py) holding the Cranfield demo
answers: ranking, an evaluation, questions full of query syntax (and why the preset does not use edismax),
Solr's own error messages, and Solr's basic authentication checking the Authorization header."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from corpus.models import Question, Split
from evaluation.models import QuestionResult, RunStatus
from evaluation.services import score_rankings
from rankers.base import RankQuery
from rankers.engine import EngineBackend, EngineError
from rankers.engine_config import preset_config, validate_engine_config
from rankers.services import ranker_create
from tests.evaluation.helpers import evaluate_inline
from tests.rankers.real_engines import SOLR_PASSWORD, SOLR_USER

QUESTION = "what is the boundary layer of a flat plate in supersonic flow"
SYNTAX = '+ - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /'
NASTY = f'boundary "layer" \\ {SYNTAX} naïve ☃ 😀\tflat id:184 {{{{rows}}}} & rows=1000 #frag %20 +plate'


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text))


def select(question: str, rows: int = 10) -> dict:
    """The solr preset's parameters, written out by hand (the expected values come from them)."""
    return {
        "q": question,
        "defType": "simple",
        "q.operators": "WHITESPACE",
        "qf": "title^2 text",
        "rows": rows,
        "fl": "id,score",
        "wt": "json",
    }


def backend(config: dict) -> EngineBackend:
    return EngineBackend(config=validate_engine_config(config))


def solr_config(solr, **extra) -> dict:
    return {"preset": "solr", "url": solr.select_url, "retries": 0, **extra}


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def rank(solr, question: str, k: int = 10, **extra):
    return backend(solr_config(solr, **extra)).rank(RankQuery("q", question), k)


def test_preset_ranks_as_solr_itself_scores(solr):
    ranking = rank(solr, QUESTION)

    assert ranking.answers == solr.search(select(QUESTION))
    assert ranking.ids[:3] == ["180", "3", "306"]
    assert ranking.answers[0][1] == pytest.approx(15.606976, abs=1e-5)


def test_preset_rows_limit_the_hits(solr):
    assert rank(solr, QUESTION, 3).answers == solr.search(select(QUESTION))[:3]


def test_question_with_query_syntax_ranks_as_its_plain_words(solr):
    ranking = rank(solr, NASTY)

    assert len(ranking.answers) == 10  # not rows=1000 from the question
    assert ranking.answers == solr.search(select(words(NASTY)))
    assert ranking.answers[0] == ("588", pytest.approx(16.576122, abs=1e-5))


@pytest.mark.parametrize(
    "question, plain",
    [
        ("-boundary -layer", "boundary layer"),  # not "every answer without these words"
        ("boundary AND layer OR NOT shock", "boundary layer shock"),  # operators are words (stop words)
        ("bound* layer~2 plate^100", "bound layer 2 plate 100"),  # no wildcard, fuzziness or boost
        ('_query_:"{!term f=id}184"', "query term f id 184"),  # no nested query parser
        ("{!func}div(x)", "func div x"),  # local parameters are text too
    ],
)
def test_question_syntax_is_text_not_a_query(solr, question, plain):
    assert rank(solr, question).answers == solr.search(select(plain))


def test_question_of_only_syntax_characters_ranks_nothing(solr):
    assert rank(solr, SYNTAX).answers == []


def test_question_naming_a_field_and_an_id_finds_no_answer(solr):
    # No answer has the words "id" or "184"; as query syntax it would fetch answer 184 (see below).
    assert rank(solr, "id:184").answers == []


def test_edismax_would_take_the_question_as_query_syntax(solr):
    """Why the preset is not edismax (as it was): on the same node, edismax searches the id field for
    "id:184", ranks every answer but two words' for "-boundary -layer", and finds nothing for the syntax."""
    edismax = {**select(""), "defType": "edismax"}
    del edismax["q.operators"]

    assert [a for a, _ in solr.search({**edismax, "q": "id:184"})] == ["184"]
    negated = solr.search({**edismax, "q": "-boundary -layer"})
    assert len(negated) == 10 and {score for _, score in negated} == {1.0}
    assert solr.search({**edismax, "q": SYNTAX}) == []


def test_unknown_field_quotes_solr(solr):
    params = {**preset_config("solr")["request"]["params"], "qf": "title^2 body"}

    with pytest.raises(EngineError) as caught:
        rank(solr, QUESTION, request={"params": params})

    assert str(caught.value) == f"engine at {solr.select_url} answered 400 Bad Request: undefined field body"
    assert (caught.value.status, caught.value.engine_message) == (400, "undefined field body")


def test_malformed_template_quotes_solr(solr):
    params = {**preset_config("solr")["request"]["params"], "rows": "ten {{rows}}"}

    with pytest.raises(EngineError) as caught:
        rank(solr, QUESTION, request={"params": params})

    assert caught.value.engine_message == 'For input string: "ten 10"'


def test_unknown_core_is_jetty_html_with_status_only(solr):
    url = f"{solr.url}/no-such-core/select"

    with pytest.raises(EngineError) as caught:
        backend({"preset": "solr", "url": url, "retries": 0}).rank(RankQuery("q", QUESTION), 10)

    assert str(caught.value) == f"engine at {url} answered 404 Not Found"


def test_auth_header_is_checked_by_solr(solr):
    right = rank(solr, QUESTION, auth_header=basic(SOLR_USER, SOLR_PASSWORD))
    assert right.answers == solr.search(select(QUESTION))

    with pytest.raises(EngineError) as caught:
        rank(solr, QUESTION, auth_header=basic(SOLR_USER, "wrong"))
    assert str(caught.value) == f"engine at {solr.select_url} answered 401 Unauthorized"


@pytest.mark.django_db
def test_evaluation_of_the_demo_collection_scores_solr_rankings(solr, demo_load):
    collection = demo_load()
    ranker = ranker_create(collection=collection, name="Solr", kind="engine", config=solr_config(solr))

    run = evaluate_inline(ranker)

    assert run.status == RunStatus.SUCCEEDED, run.error
    results = list(
        QuestionResult.objects.filter(run=run).select_related("question").order_by("question__external_id")
    )
    test_questions = Question.objects.filter(collection=collection, split=Split.TEST).order_by("external_id")
    expected = [[a for a, _ in solr.search(select(q.text))] for q in test_questions]
    assert [r.ranked_answer_ids for r in results] == expected
    labels = [
        {a: g for a, g in zip(r.ranked_answer_ids, r.labels, strict=True) if g is not None} for r in results
    ]
    scored = score_rankings(run=run, rankings=expected, labels=labels)
    assert [r.dcg for r in results] == pytest.approx(list(scored.dcg))
    assert run.ndcg_mean == pytest.approx(float(np.mean([r.ndcg for r in results if r.ndcg is not None])))
    assert (len(results), round(run.ndcg_mean, 4)) == (57, 0.3367)
