"""`manage.py judge_server`: the reference judge, over real HTTP in a subprocess."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from django.core.management import CommandError, call_command

from judges.models import DEFAULT_PROMPT
from judges.prompts import prompt
from tests.http_client import HTTP


def _ask(server, question: str, answer: str, **headers) -> httpx.Response:
    text = prompt(template=DEFAULT_PROMPT, reply_format="digit", question=question, answer=answer)
    body = {"model": "reference-judge", "messages": [{"role": "user", "content": text}]}
    return HTTP.post(server.url + "/chat/completions", json=body, headers=headers, timeout=10)


Q1 = "how does the boundary layer of a flat plate grow"
A1 = "Boundary layer\nThe boundary layer of a flat plate thickens downstream."
A5 = "Pasta\nCooking pasta in salted boiling water."


def test_models_lists_the_reference_judge(judge_server):
    response = HTTP.get(judge_server.url + "/models")

    assert response.status_code == 200
    assert response.json()["data"][0]["id"] == "reference-judge"


def test_grades_a_labelled_pair_with_its_label_and_counts_tokens(judge_server):
    response = _ask(judge_server, Q1, A1)

    payload = response.json()
    assert response.status_code == 200
    assert payload["choices"][0]["message"] == {"role": "assistant", "content": "3"}
    assert payload["usage"]["completion_tokens"] == 1 and payload["usage"]["prompt_tokens"] > 20


def test_grades_an_unlabelled_pair_zero(judge_server):
    assert _ask(judge_server, Q1, A5).json()["choices"][0]["message"]["content"] == "0"


def test_wrong_key_is_401_and_right_key_passes(judge_server_factory):
    server = judge_server_factory("--api-key", "right-key")

    assert _ask(server, Q1, A1).status_code == 401
    assert _ask(server, Q1, A1, Authorization="Bearer nope").status_code == 401
    assert _ask(server, Q1, A1, Authorization="Bearer right-key").status_code == 200
    assert HTTP.get(server.url + "/models").status_code == 401


def test_rate_limit_then_failure_then_answers(judge_server_factory):
    server = judge_server_factory("--rate-limit-first", "1", "--retry-after", "2", "--fail-first", "1")

    limited, failed, answered = (_ask(server, Q1, A1) for _ in range(3))

    assert (limited.status_code, limited.headers["Retry-After"]) == (429, "2")
    assert failed.status_code == 500
    assert answered.status_code == 200


@pytest.mark.parametrize(
    ("option", "content"),
    [("--malformed", "This answer seems somewhat relevant, I think."), ("--out-of-range", "7")],
)
def test_bad_reply_faults(judge_server_factory, option, content):
    server = judge_server_factory(option)

    assert _ask(server, Q1, A1).json()["choices"][0]["message"]["content"] == content


def test_json_reply_format(judge_server_factory):
    server = judge_server_factory("--reply", "json")

    content = _ask(server, Q1, A1).json()["choices"][0]["message"]["content"]

    assert json.loads(content)["grade"] == 3


def test_noise_is_deterministic_per_pair(judge_server_factory):
    server = judge_server_factory("--noise", "1", "--seed", "3")

    grades = {_ask(server, Q1, A1).json()["choices"][0]["message"]["content"] for _ in range(3)}

    assert grades == {"2"}  # always one step off 3 (and 4 is off the scale)


def test_bad_body_is_400_and_unknown_path_404(judge_server):
    bad = HTTP.post(judge_server.url + "/chat/completions", content=b"nope", timeout=10)

    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
    assert HTTP.get(judge_server.url + "/nothing").status_code == 404


def test_unknown_collection_is_a_command_error(db):
    with pytest.raises(CommandError, match="no collection with slug 'nope'"):
        call_command("judge_server", "--collection", "nope")


def _ask_logprobs(server, question: str, answer: str, **options) -> httpx.Response:
    text = prompt(template=DEFAULT_PROMPT, reply_format="digit", question=question, answer=answer)
    body = {"model": "reference-judge", "messages": [{"role": "user", "content": text}], "logprobs": True}
    return HTTP.post(server.url + "/chat/completions", json={**body, **options}, timeout=10)


def test_logprobs_give_the_grades_probability(judge_server):
    response = _ask_logprobs(judge_server, Q1, A1, top_logprobs=5)

    (token,) = response.json()["choices"][0]["logprobs"]["content"]
    assert token["token"] == "3" and token["logprob"] == pytest.approx(math.log(0.9))
    assert token["bytes"] == [51]
    assert [(t["token"], round(math.exp(t["logprob"]), 6)) for t in token["top_logprobs"]] == [
        ("3", 0.9),
        ("2", 0.1),
    ]


def test_logprobs_top_list_is_cut_to_the_request(judge_server):
    one = _ask_logprobs(judge_server, Q1, A1, top_logprobs=1).json()["choices"][0]["logprobs"]["content"]
    none = _ask_logprobs(judge_server, Q1, A1).json()["choices"][0]["logprobs"]["content"]

    assert [t["token"] for t in one[0]["top_logprobs"]] == ["3"]
    assert none[0]["top_logprobs"] == []


def test_logprobs_are_absent_unless_asked_and_bad_top_is_400(judge_server):
    assert "logprobs" not in _ask(judge_server, Q1, A1).json()["choices"][0]
    response = _ask_logprobs(judge_server, Q1, A1, top_logprobs=21)

    assert response.status_code == 400 and "top_logprobs" in response.json()["error"]["message"]


def test_noised_grades_are_less_sure_and_json_says_its_confidence(judge_server_factory):
    server = judge_server_factory("--noise", "1", "--reply", "json", "--confidence")

    response = _ask_logprobs(server, Q1, A1, top_logprobs=5)

    choice = response.json()["choices"][0]
    content = json.loads(choice["message"]["content"])
    assert content["grade"] == 2 and content["confidence"] == 0.6  # the label 3, moved one step down
    grade = [t for t in choice["logprobs"]["content"] if t["logprob"] != 0]
    assert [(t["token"], round(math.exp(t["logprob"]), 6)) for t in grade[0]["top_logprobs"]] == [
        ("2", 0.6),
        ("3", 0.4),
    ]
    assert "".join(t["token"] for t in choice["logprobs"]["content"]) == choice["message"]["content"]
