"""Deciding on a new version: compared with the champion on the test questions, then promoted or kept
by the ranker's promotion policy, the figures and the reason kept."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from evaluation.certainty import VersionPair, certainty, comparison_json
from evaluation.online.verdict import BETTER
from evaluation.selectors.online import OnlineTestResult, online_test_result
from evaluation.services import versions_compare
from evaluation.uncertainty.verdicts import REAL_IMPROVEMENT
from rankers.models import ChampionChange, OnlineTest, OnlineTestState, PromotionPolicy, Ranker, RankerVersion
from rankers.online_tests import online_test_stop
from rankers.services import version_promote
from trainer.ranker_display import Predicted, comparison_text, rated_shares_text
from trainer.selectors import PromotionCheck, promotion_check


class PromotionUnconfirmed(ValidationError):
    """Promoting by hand a version that is not measured better than the champion, unconfirmed: ``check``
    holds the measured difference to show before asking again."""

    def __init__(self, check: PromotionCheck) -> None:
        self.check = check
        super().__init__({"confirm": f"{check.sentence} Confirm to promote it anyway."})


@transaction.atomic
def version_promote_by_hand(
    *, version: RankerVersion, changed_by: User, confirm: bool = False, reason: str = ""
) -> ChampionChange:
    """A trainer makes ``version`` the champion (promoting a challenger, or rolling back).

    A version not measured better than the champion now (``trainer.selectors.promotion_check``) needs
    ``confirm``: without it, PromotionUnconfirmed (a ValidationError naming ``confirm``) and nothing
    changes. The history's reason is ``reason`` or "Promoted by hand by tom.", and says when it was
    confirmed although not measured better.
    """
    check = promotion_check(version=version)
    if check.needs_confirmation and not confirm:
        raise PromotionUnconfirmed(check)
    if not reason:
        reason = f"Promoted by hand by {changed_by.username}."
        if check.needs_confirmation:
            reason += f" Confirmed although not measured better: {check.sentence}"
    return version_promote(version=version, changed_by=changed_by, reason=reason)


def version_decide(*, version: RankerVersion) -> tuple[str, str]:
    """Compare a new version with the champion on the test questions and apply the ranker's policy.

    Returns (decision, reason): "promoted", "kept" or "manual". The figures are kept on the version.
    """
    ranker = Ranker.objects.select_related("champion", "collection").get(pk=version.ranker_id)
    champion = ranker.champion
    if champion is None:
        version_promote(version=version, changed_by=None, reason="The ranker had no champion yet.")
        return "promoted", "The ranker had no champion yet."
    comparison = versions_compare(challenger=version, champion=champion)
    figures = {**comparison.as_json(), "champion": champion.label, "champion_id": champion.pk}
    if comparison.questions == 0:
        # Nothing to compare on (often the first training: the queue serves training questions first).
        version.comparison = figures
        version.save(update_fields=["comparison"])
        said = (
            f"{version.label} could not be compared with {champion.label}: no test question has a rated "
            f"answer yet."
        )
        if ranker.promotion_policy == PromotionPolicy.MANUAL:
            return "manual", f"{said} The policy is manual: a trainer decides."
        return "kept", (
            f"{said} Kept {champion.label}; rate test questions (the queue asks for them once an evaluation "
            f"has run), then train again or promote {version.label} by hand."
        )
    # The test below leaves unrated answers out (judged-only NDCG): it cannot tell what they are worth,
    # so the decision also says what counting them as predicted gives.
    counted = certainty(collection=ranker.collection, pair=VersionPair(champion, version))
    predicted = counted.comparison
    if predicted is not None:
        figures["predicted"] = comparison_json(predicted)
        shown = Predicted.of(figures["predicted"])
        predicted_said = f" {shown.clause(version.label)}" if shown else ""
    else:
        why = counted.unavailable or "no test question to count them on"
        predicted_said = f" The unrated answers could not be counted: {why}."
    version.comparison = figures
    version.save(update_fields=["comparison"])
    k = comparison.k
    figures_said = comparison_text(
        k=k,
        challenger=comparison.challenger_ndcg,
        champion=comparison.champion_ndcg,
        difference=comparison.difference,
        ci_low=comparison.ci_low,
        ci_high=comparison.ci_high,
        p_value=comparison.p_value,
    )
    shares = rated_shares_text(
        k=k, challenger=comparison.challenger_rated_share, champion=comparison.champion_rated_share
    )
    said = (
        f"{version.label} vs {champion.label} on {comparison.questions} test questions: {figures_said}"
        f"{', ' + shares if shares else ''}"
    )
    policy = ranker.promotion_policy
    if policy == PromotionPolicy.MANUAL:
        return "manual", f"{said}.{predicted_said} The policy is manual: a trainer decides."
    if policy in ONLINE_POLICIES:
        return "kept", (
            f"{said}: {comparison.verdict}.{predicted_said} Kept {champion.label}; the policy promotes "
            f"{ONLINE_RULES[policy]}: start an online test of {version.label}."
        )
    if policy == PromotionPolicy.BETTER:
        promote = comparison.verdict == "better"
        rule = "promoted only if significantly better (p < 0.05)"
    elif policy == PromotionPolicy.SETTLED:
        # Better by the test, and still better whatever the unrated answers turn out to be (at least
        # SETTLED_SHARE of the completions of their labels): no credit for ranking rated answers first.
        promote = (
            comparison.verdict == "better" and predicted is not None and predicted.verdict == REAL_IMPROVEMENT
        )
        rule = (
            "promoted only if significantly better (p < 0.05) and settled as a real improvement "
            "counting the unrated answers"
        )
    else:
        promote = comparison.verdict != "worse"
        rule = "promoted unless significantly worse (p < 0.05)"
    if not promote:
        return (
            "kept",
            f"{said}: {comparison.verdict}.{predicted_said} Kept {champion.label}; a new version is {rule}.",
        )
    reason = f"{said}: {comparison.verdict}.{predicted_said} Promoted by the policy: {rule}."
    version_promote(version=version, changed_by=None, reason=reason, figures=figures)
    return "promoted", reason


ONLINE_POLICIES = (PromotionPolicy.ONLINE, PromotionPolicy.ONLINE_AND_OFFLINE)
ONLINE_RULES: dict[str, str] = {
    PromotionPolicy.ONLINE: "a version on a significant win of its online test",
    PromotionPolicy.ONLINE_AND_OFFLINE: (
        "a version on a significant win of its online test if it is also significantly better offline "
        "(p < 0.05)"
    ),
}


def _online_said(result: OnlineTestResult) -> str:
    c = result.counts
    return (
        f"online test of {result.test.challenger.label} against {result.test.champion.label}: "
        f"{c.impressions:,} interleaved queries, {c.queries_with_clicks:,} with clicks, {c.wins}/{c.losses}/"
        f"{c.ties} wins/losses/ties, {result.sentence}"
    )


@transaction.atomic
def online_test_settle(*, test: OnlineTest) -> tuple[str, str]:
    """Apply a running test's stop rule and, on a significant win, the ranker's online policy.

    Returns (decision, reason): "running" (the stop rule says go on), "stopped" (stopped by its stop rule,
    not promoted) or "promoted" (stopped, and the challenger made champion by the ``online`` policy, or by
    ``online-and-offline`` when the test questions also say significantly better now). Beat runs it for
    every running test (``trainer.tasks.online_tests_settle``).
    """
    test = OnlineTest.objects.select_for_update().select_related("champion", "challenger").get(pk=test.pk)
    if test.state != OnlineTestState.RUNNING:
        return "stopped", "The online test is stopped already."
    result = online_test_result(test=test)
    if not result.stop_due:
        return "running", f"The {_online_said(result)}."
    said = f"The {_online_said(result)}"
    online_test_stop(test=test, stopped_by=None, reason=f"Stopped by its stop rule: {result.stop_due}.")
    challenger = RankerVersion.objects.select_related("ranker").get(pk=test.challenger_id)
    ranker = challenger.ranker
    policy = ranker.promotion_policy
    if policy not in ONLINE_POLICIES or result.verdict.verdict != BETTER:
        return "stopped", f"{said}. Stopped: {result.stop_due}."
    if ranker.champion_id != test.champion_id:
        return "stopped", f"{said}. Not promoted: the champion changed during the test."
    offline = ""
    if policy == PromotionPolicy.ONLINE_AND_OFFLINE:
        comparison = versions_compare(challenger=challenger, champion=test.champion)
        offline = f"; offline on {comparison.questions} test questions: {comparison.verdict}"
        if comparison.verdict != "better":
            return "stopped", f"{said}{offline}. Kept {test.champion.label}: the policy needs both to agree."
    reason = f"{said}{offline}. Promoted by the policy: {ONLINE_RULES[policy]}."
    figures = {
        "online_test": test.pk,
        "impressions": result.counts.impressions,
        "queries_with_clicks": result.counts.queries_with_clicks,
        "wins": result.counts.wins,
        "losses": result.counts.losses,
        "ties": result.counts.ties,
        "delta": result.verdict.delta,
        "ci_low": result.verdict.low,
        "ci_high": result.verdict.high,
        "p_value": result.verdict.p_value,
    }
    version_promote(version=challenger, changed_by=None, reason=reason, figures=figures)
    return "promoted", reason
