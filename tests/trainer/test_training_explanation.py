"""The last training in plain words (``trainer.training_explanation``), from what the learner stored: the
demo's case (the learned models lost cross-validation, the untrained fusion made again), a learned model
kept and promoted, too few learnable questions, a version from before ``rated_per_question``."""

from __future__ import annotations

from rankers.models import RankerVersion
from trainer.models import Training
from trainer.training_explanation import CandidateRow, TrainingExplanation, same_model_sentence

# The demo's first training as the learner stores it (trained on the demo's imported labels: the learned
# fusion 0.4901, the untrained fusion 0.5646 in judged-only cross-validation).
DEMO_DETAILS = {
    "first_stage": "bm25",
    "training_questions": 93,
    "learnable_questions": 87,
    "min_cv_gain": 0.005,
    "cv_judged_only": True,
    "cv_rated_share": 0.3355,
    "rated_per_question": {"k": 10, "mean": 8.0753, "under_k": 66, "to_k": 305},
    "candidates": [
        {"name": "bm25", "trained": False, "cv_ndcg": 0.522625, "chosen": False, "spread": 0.01},
        {"name": "fusion", "trained": False, "cv_ndcg": 0.564628, "chosen": True, "spread": 0.012},
        {"name": "learned-fusion", "trained": True, "cv_ndcg": 0.490059, "chosen": False, "spread": 0.02},
        {"name": "lambdamart", "trained": True, "cv_ndcg": 0.374786, "chosen": False, "spread": 0.03},
    ],
}
WITHIN_NOISE = {
    "k": 10,
    "questions": 57,
    "challenger_ndcg": 0.43611,
    "champion_ndcg": 0.43611,
    "difference": 0.0,
    "ci_low": 0.0,
    "ci_high": 0.0,
    "p_value": 1.0,
    "verdict": "within noise",
    "champion": "v1",
    "champion_id": 1,
}


def _explain(details, *, comparison=None, decision="kept", same_as=None, label_count=751):
    version = RankerVersion(
        pk=2,
        label="v2",
        method="fusion",
        label_count=label_count,
        details=details,
        comparison=comparison or {},
    )
    training = Training(version=version, decision=decision, decision_reason="The decision's reason.")
    return TrainingExplanation.of(training=training, same_as=same_as, k=10)


def test_explanation_of_the_demo_says_the_learners_lost_and_how_many_ratings_more():
    v1 = RankerVersion(pk=1, label="v1", method="fusion")

    ex = _explain(DEMO_DETAILS, comparison=WITHIN_NOISE, same_as=v1)

    assert ex.tried == (
        "It tried 4 ways of ranking, 2 of which learn from the 751 ratings of 93 training "
        "questions, and scored each by cross-validation (on questions it had not learned from, rated answers "
        "only)."
    )
    assert ex.kept == (
        "No model that learns from ratings beat the untrained fusion, which needs none: the best of them, the "
        "learned fusion, scored 0.490 against 0.565 (a lead of at least 0.005 is needed). So training kept the "
        "untrained fusion. v2 is therefore the same model as v1."
    )
    assert ex.test == (
        "On the 57 test questions v2 scored 0.436 against v1's 0.436 in NDCG@10 on rated answers (+0.000): within noise. v1 stays the "
        "champion."
    )
    # (1 − 0.3355) × 10 places × 93 questions = 618 unrated places, said as about 620.
    assert ex.next_step == (
        "More rated answers in the training questions' top 10. The 93 training questions have 8.1 rated answers each "
        "on average, but in cross-validation rated answers held only 34% of the top 10 places of the kept ranking: "
        "about 620 of those places hold an unrated answer. Rating them (the rating queue of training questions "
        "shows their top answers) gives the learners more to learn from and cross-validation more to score them "
        "on. Whether that is enough for a model that learns to beat what needs no ratings shows at the next "
        "training."
    )
    assert ex.per_question == (
        "66 of the 93 training questions have fewer than 10 rated answers; 305 ratings would bring each of them "
        "to 10."
    )
    assert ex.cv_heading == "cross-validated NDCG@10"
    assert ex.candidates == [
        CandidateRow(words="Plain BM25", trained=False, cv_ndcg="0.523", kept=False),
        CandidateRow(
            words="BM25 + semantic similarity, untrained fusion", trained=False, cv_ndcg="0.565", kept=True
        ),
        CandidateRow(
            words="Learned fusion of BM25, semantic similarity, RM3 and rating propagation",
            trained=True,
            cv_ndcg="0.490",
            kept=False,
        ),
        CandidateRow(words="LambdaMART", trained=True, cv_ndcg="0.375", kept=False),
    ]
    assert ex.decision_reason == "The decision's reason."


def test_explanation_of_a_version_before_rated_per_question_estimates_from_the_labels():
    details = {
        key: value
        for key, value in DEMO_DETAILS.items()
        if key not in ("rated_per_question", "cv_rated_share")
    }
    details["cv_judged_only"] = False

    ex = _explain(details, comparison=WITHIN_NOISE)

    # 751 labels over 93 questions: 8.08 each; 93 × (10 − 8.08) = 179, said as about 180.
    assert ex.next_step == (
        "More rated answers per training question. The 93 training questions have 8.1 rated answers each on "
        "average, and NDCG@10 looks at 10: rating 10 answers for each is about 180 more ratings. Whether that "
        "is enough for a model that learns to beat what needs no ratings shows at the next training."
    )
    assert ex.per_question == ""
    assert ex.cv_heading == "cross-validated NDCG@10"
    assert ex.kept.endswith("So training kept the untrained fusion.")


def test_explanation_with_enough_answers_per_question_asks_for_more_questions():
    details = {**DEMO_DETAILS, "rated_per_question": {"k": 10, "mean": 12.5, "under_k": 3, "to_k": 9}}
    del details["cv_rated_share"]

    ex = _explain(details, comparison=WITHIN_NOISE)

    assert ex.next_step == (
        "More rated training questions. The 93 training questions have 12.5 rated answers each on average, "
        "already 10 or more, so new questions give the learners new examples. Whether that is enough shows at "
        "the next training."
    )


def test_explanation_of_a_learned_model_kept_and_promoted():
    details = {
        **DEMO_DETAILS,
        "candidates": [
            {"name": "bm25", "trained": False, "cv_ndcg": 0.4301, "chosen": False},
            {"name": "fusion", "trained": False, "cv_ndcg": 0.5697, "chosen": False},
            {"name": "learned-fusion", "trained": True, "cv_ndcg": 0.6012, "chosen": True},
            {"name": "lambdamart", "trained": True, "cv_ndcg": 0.5801, "chosen": False},
        ],
    }
    better = {**WITHIN_NOISE, "challenger_ndcg": 0.4811, "difference": 0.045, "verdict": "better"}

    ex = _explain(details, comparison=better, decision="promoted")

    assert ex.kept == (
        "It kept the learned fusion, which learned from the ratings: it scored 0.601, +0.031 over the best that "
        "needs none (the untrained fusion)."
    )
    assert ex.test == (
        "On the 57 test questions v2 scored 0.481 against v1's 0.436 in NDCG@10 on rated answers (+0.045): better. v2 is now the champion."
    )
    assert ex.next_step == "Keep rating: the next training learns from every rating so far."


def test_explanation_of_a_learned_model_within_noise_says_how_many_ratings_would_settle_it():
    details = {
        **DEMO_DETAILS,
        "candidates": [
            {"name": "fusion", "trained": False, "cv_ndcg": 0.5, "chosen": False},
            {"name": "lambdamart", "trained": True, "cv_ndcg": 0.6, "chosen": True},
        ],
    }
    comparison = {
        **WITHIN_NOISE,
        "predicted": {
            "probability": 0.7,
            "verdict": "",
            "verdict_shares": [0.3, 0.7, 0.0],
            "ratings_to_settle": 299,
        },
    }

    ex = _explain(details, comparison=comparison)

    assert ex.next_step == (
        "More ratings of the test questions' answers: about 299 more would settle whether v2 is better than v1."
    )


def test_explanation_with_too_few_learnable_questions_tried_no_learned_model():
    details = {
        "first_stage": "bm25",
        "training_questions": 12,
        "learnable_questions": 7,
        "reason": "Only 7 training questions have a relevant answer among BM25 candidates; at least 10 are "
        "needed to choose by cross-validation, so this version ranks as BM25 does.",
    }

    ex = _explain(details, comparison={**WITHIN_NOISE, "questions": 0}, label_count=30)

    assert ex.tried == (
        "It had the 30 ratings of 12 training questions and tried no model that learns "
        "from them. Only 7 training questions have a relevant answer among BM25 candidates; at least 10 are "
        "needed to choose by cross-validation, so this version ranks as BM25 does."
    )
    assert (ex.kept, ex.candidates) == ("", [])
    assert ex.test == (
        "It could not be compared with v1: no test question has a rated answer yet, so v1 stays the champion."
    )
    assert ex.next_step == (
        "Rate answers of more training questions: 7 of them have a relevant rated answer, and the learned "
        "models are tried from 10 on."
    )


def test_explanation_without_a_version_is_none():
    assert TrainingExplanation.of(training=Training(), same_as=None, k=10) is None


def test_same_model_sentence_says_why_training_kept_it():
    v1 = RankerVersion(pk=1, label="v1", method="fusion")
    v2 = RankerVersion(pk=2, label="v2", method="fusion", details=DEMO_DETAILS)
    bm25 = RankerVersion(pk=3, label="bm25", method="bm25")
    v3 = RankerVersion(pk=4, label="v3", method="bm25", details={"reason": "Only 7 training questions …"})

    assert same_model_sentence(version=v2, same_as=v1, kind="builtin") == (
        "v2 is the same model as v1 (the untrained fusion): training kept it because no model that learns from "
        "ratings beat it in cross-validation."
    )
    assert same_model_sentence(version=v3, same_as=bm25, kind="builtin") == (
        "v3 is the same model as bm25 (plain BM25): training kept it because too few training questions have a "
        "relevant rated answer to learn from."
    )
    engine_v1 = RankerVersion(pk=5, label="v1", method="")
    engine_v2 = RankerVersion(pk=6, label="v2", method="engine")
    assert same_model_sentence(version=engine_v2, same_as=engine_v1, kind="engine") == (
        "v2 is the same model as v1 (the engine as it is)."
    )
