"""Grading one pair: the builtin judge's score and thresholds, a chat-completions call and its reply
parsed (never with the ranker's rank or score), or the clicks judge's stars from the production log; a
judge's test on one pair; keys kept out of messages.

A reply that does not parse or says a grade outside 0–3 fails that pair (``PairFailed``: the run goes
on); transient failures are retried with backoff by the client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from corpus.models import Answer, Question, Split
from evaluation.selectors.clicks import (
    COEC_METHOD,
    DBN_METHOD,
    ClickParameters,
    ImplicitJudgment,
    implicit_judgments,
    star_mapping,
)
from judges import builtin
from judges.client import RETRIES, ChatClient, JudgeError
from judges.confidence import grade_probability, json_confidence, threshold_distance
from judges.models import Judge, JudgeKind, ReplyFormat
from judges.prompts import Example, GradeOutOfRange, ReplyUnparsable, parse_reply, prompt
from judges.selectors import human_labelled_pairs

# A clicks judge's certainty in a pair's stars: n / (n + CLICK_CERTAINTY_HALF) for the n impressions its
# figure rests on (½ at 10 impressions), so "Review the judge" sends people the pairs seen least.
CLICK_CERTAINTY_HALF = 10


@dataclass(frozen=True)
class PairText:
    question_id: int
    answer_id: int
    question: str
    answer_external_id: str
    answer: str


@dataclass(frozen=True)
class Judgment:
    stars: int
    reply: str
    prompt: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    certainty: float | None = None  # ``judges.confidence``


class Grader:
    """Grades one pair at a time (thread-safe); ``close`` when done."""

    def __init__(
        self, judge: Judge, on_retry: Callable[[], None] | None = None, retries: int | None = None
    ) -> None:
        self.judge = judge
        self.on_retry = on_retry
        self.client: ChatClient | None = None
        self.examples: list[Example] = []
        self.clicks: dict[tuple[int, int], ImplicitJudgment] | None = None
        if judge.kind == JudgeKind.CLICKS:
            self.clicks = click_evidence(judge=judge)
        elif judge.kind == JudgeKind.BUILTIN:
            # Training questions' labels only: the judge grades test questions' pairs for the evaluation,
            # so propagating or calibrating from their labels would carry people's test grades into it.
            labelled = [
                (p.question_id, p.question, p.answer_external_id, p.stars)
                for p in human_labelled_pairs(collection=judge.collection, split=Split.TRAIN)
            ]
            self.scorer = builtin.scorer_for(collection=judge.collection, labelled=labelled)
            self.thresholds, self.labels_used = builtin.calibrate_on(scorer=self.scorer, labelled=labelled)
            Judge.objects.filter(pk=judge.pk).update(
                calibration={
                    "thresholds": list(self.thresholds),
                    "labels": self.labels_used,
                    "signal": "bm25-ratio" if self.scorer.neighbours is None else "propagation-mean",
                    "fallback": self.scorer.fallback,
                }
            )
        else:
            self.examples = few_shot_examples(judge=judge)
            self.client = ChatClient(
                base_url=judge.base_url,
                model=judge.model,
                api_key=judge.api_key,
                temperature=judge.temperature,
                timeout=judge.timeout_seconds,
                concurrency=judge.concurrency,
                requests_per_minute=judge.requests_per_minute,
                retries=RETRIES if retries is None else retries,
                logprobs=judge.logprobs,
            )

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def grade(self, pair: PairText) -> Judgment:
        if self.clicks is not None:
            return self.grade_by_clicks(pair)
        if self.client is None:
            score = self.scorer.score(pair.question, pair.answer_external_id, pair.question_id)
            description = self.scorer.describe(pair.question, pair.answer_external_id, pair.question_id)
            return Judgment(
                builtin.grade(score, self.thresholds),
                builtin.reply_text(description, score, self.thresholds, self.labels_used),
                certainty=threshold_distance(score, self.thresholds),
            )
        message = prompt(
            template=self.judge.prompt_template,
            reply_format=self.judge.reply_format,
            question=pair.question,
            answer=pair.answer,
            examples=[e for e in self.examples if e.question != pair.question],
        )
        reply = self.client.complete(message, on_retry=self.on_retry)
        try:
            stars, _ = parse_reply(reply.content, self.judge.reply_format)
        except (ReplyUnparsable, GradeOutOfRange) as exc:
            raise PairFailed(str(exc), reply.prompt_tokens, reply.completion_tokens, reply.attempts) from None
        return Judgment(
            stars,
            reply.content,
            message,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.attempts,
            certainty=self.certainty(stars, reply.content, reply.token_logprobs),
        )

    def grade_by_clicks(self, pair: PairText) -> Judgment:
        """The pair's stars by the judge's click model; PairFailed when the log has no evidence for it."""
        assert self.clicks is not None
        evidence = self.clicks.get((pair.question_id, pair.answer_id))
        method = self.judge.model
        stars = evidence.stars(method) if evidence else None
        if evidence is None or stars is None:
            raise PairFailed("The production log has no click evidence for this pair.", requests=0)
        if method == COEC_METHOD:
            seen = evidence.impressions
            reply = (
                f"COEC {evidence.coec:.3f}: {evidence.clicks} clicks in {evidence.impressions} impressions, "
                f"best rank {evidence.best_rank}. Stars: {stars}"
            )
        elif method == DBN_METHOD:
            seen = evidence.dbn_reads
            reply = (
                f"Cascade-corrected click rate {evidence.dbn_attractiveness:.3f} in the {evidence.dbn_reads} "
                f"sessions that read it. Stars: {stars}"
            )
        else:
            seen = evidence.seen
            reply = (
                f"Position-corrected click rate {evidence.attractiveness:.3f} over {evidence.seen} "
                f"impressions. Stars: {stars}"
            )
        return Judgment(stars, reply, certainty=seen / (seen + CLICK_CERTAINTY_HALF))

    def certainty(self, stars: int, content: str, token_logprobs: list | None) -> float | None:
        """The JSON reply's own confidence, else the grade's probability from token log-probabilities,
        else None (``judges.confidence``)."""
        if self.judge.reply_format == ReplyFormat.JSON:
            said = json_confidence(content)
            if said is not None:
                return said
        if token_logprobs is None:
            return None
        return grade_probability(token_logprobs, stars, self.judge.reply_format)


class PairFailed(Exception):
    """This pair's reply could not be used (the run goes on); carries the tokens it cost."""

    def __init__(self, message: str, prompt_tokens: int = 0, completion_tokens: int = 0, requests: int = 1):
        super().__init__(message)
        self.prompt_tokens, self.completion_tokens, self.requests = prompt_tokens, completion_tokens, requests


def click_evidence(*, judge: Judge) -> dict[tuple[int, int], ImplicitJudgment]:
    """The collection's implicit judgments by pair (default parameters), recorded on the judge as its
    calibration: the log's figures and its model's star thresholds, shown on its page."""
    parameters = ClickParameters()
    judgments = implicit_judgments(collection=judge.collection, parameters=parameters)
    thresholds = judgments.thresholds(judge.model)
    Judge.objects.filter(pk=judge.pk).update(
        calibration={
            "method": judge.model,
            "max_rank": parameters.max_rank,
            "thresholds": list(thresholds),
            "stars": star_mapping(thresholds),
            "events": judgments.events,
            "pairs": len(judgments.judgments),
        }
    )
    return {(j.question_id, j.answer_id): j for j in judgments.judgments}


def few_shot_examples(*, judge: Judge) -> list[Example]:
    """Up to ``judge.few_shot`` worked examples from people's labels on training questions, grades
    3, 2, 1, 0 in turn (the lowest pair ids first, so the choice is stable)."""
    if not judge.few_shot:
        return []
    by_grade: dict[int, list[Example]] = {3: [], 2: [], 1: [], 0: []}
    for pair in human_labelled_pairs(collection=judge.collection, split=Split.TRAIN):
        by_grade[pair.stars].append(Example(pair.question, pair.answer, pair.stars))
    chosen: list[Example] = []
    for i in range(judge.few_shot):
        for g in (3, 2, 1, 0):
            if len(chosen) < judge.few_shot and i < len(by_grade[g]):
                chosen.append(by_grade[g][i])
    return chosen


def pair_texts(pairs: list[tuple[int, int]], collection_id: int) -> dict[tuple[int, int], PairText]:
    """The texts of the pairs (of one collection only: others are left out)."""
    questions = dict(
        Question.objects.filter(collection_id=collection_id, pk__in={q for q, _ in pairs}).values_list(
            "pk", "text"
        )
    )
    answers = {
        pk: (external_id, f"{title}\n{body}".strip())
        for pk, external_id, title, body in Answer.objects.filter(
            collection_id=collection_id, pk__in={a for _, a in pairs}
        ).values_list("pk", "external_id", "title", "body")
    }
    return {
        (q, a): PairText(q, a, questions[q], answers[a][0], answers[a][1])
        for q, a in pairs
        if q in questions and a in answers
    }


@dataclass(frozen=True)
class TestOutcome:
    question: str
    answer: str
    prompt: str
    reply: str
    stars: int | None
    error: str


def judge_test(*, judge: Judge) -> TestOutcome:
    """Grade one pair (one people rated, else any candidate) without saving: the raw reply or the error."""
    labelled = human_labelled_pairs(collection=judge.collection, limit=1)
    if labelled:
        q, a = labelled[0].question_id, labelled[0].answer_id
    else:
        answer = Answer.objects.filter(collection=judge.collection).order_by("pk").first()
        question = Question.objects.filter(collection=judge.collection).order_by("pk").first()
        if answer is None or question is None:
            return TestOutcome(
                "", "", "", "", None, "The collection has no questions or answers to test with."
            )
        q, a = question.pk, answer.pk
    pair = pair_texts([(q, a)], judge.collection_id)[(q, a)]
    grader = None
    try:
        grader = Grader(judge, retries=0)  # a test shows the first answer, whatever it is
        judgment = grader.grade(pair)
        return TestOutcome(pair.question, pair.answer, judgment.prompt, judgment.reply, judgment.stars, "")
    except (JudgeError, PairFailed) as exc:
        return TestOutcome(pair.question, pair.answer, "", "", None, redact(str(exc), judge))
    finally:
        if grader is not None:
            grader.close()


def redact(text: str, judge: Judge) -> str:
    """``text`` without the judge's API key, whatever said it."""
    return text.replace(judge.api_key, "[key]") if judge.api_key else text
