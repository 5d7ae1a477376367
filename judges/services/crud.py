"""Judges themselves: create, change, trust and delete one, with the rater account its ratings belong to."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Collection
from evaluation.selectors.clicks import DEFAULT_METHOD, METHODS
from judges.models import ACTIVE_JUDGING, Judge, JudgeKind, ReplyFormat
from judges.prompts import template_errors
from rankers.outbound import OutboundRefused, check_url
from ratings.models import JudgeAccount, Rating
from ratings.services import judge_trust_set, labels_recompute

EDITABLE = (
    "name",
    "kind",
    "base_url",
    "model",
    "temperature",
    "concurrency",
    "requests_per_minute",
    "timeout_seconds",
    "prompt_template",
    "reply_format",
    "few_shot",
    "logprobs",
)


def _validate(judge: Judge) -> None:
    errors: dict[str, str] = {}
    if not judge.name.strip():
        errors["name"] = "A judge needs a name."
    elif (
        Judge.objects.filter(collection_id=judge.collection_id, name=judge.name.strip())
        .exclude(pk=judge.pk)
        .exists()
    ):
        errors["name"] = f"This collection already has a judge named {judge.name.strip()!r}."
    if judge.kind not in JudgeKind.values:
        errors["kind"] = f"Kind must be one of {', '.join(JudgeKind.values)}, not {judge.kind!r}."
    if judge.kind == JudgeKind.CLICKS:
        judge.model = judge.model.strip() or DEFAULT_METHOD
        if judge.model not in METHODS:
            errors["model"] = (
                f"A clicks judge's model is its click model: {', '.join(METHODS)} (the cascade model, clicks "
                f"over expected clicks, or the position-based model), not {judge.model!r}."
            )
    if judge.kind == JudgeKind.OPENAI_CHAT:
        if not judge.base_url.startswith(("http://", "https://")):
            errors["base_url"] = (
                "An openai-chat judge needs its base URL (http:// or https://), e.g. http://host/v1."
            )
        else:
            try:
                check_url(judge.base_url)
            except OutboundRefused as exc:
                errors["base_url"] = str(exc)
        if not judge.model.strip():
            errors["model"] = "An openai-chat judge needs a model name."
    problems = template_errors(judge.prompt_template)
    if problems:
        errors["prompt_template"] = " ".join(problems)
    if judge.reply_format not in ReplyFormat.values:
        errors["reply_format"] = f"Reply format must be one of {', '.join(ReplyFormat.values)}."
    if not 0 <= judge.temperature <= 2:
        errors["temperature"] = "Temperature must be from 0 to 2."
    if not 1 <= judge.concurrency <= 64:
        errors["concurrency"] = "Concurrency must be from 1 to 64."
    if judge.requests_per_minute < 0:
        errors["requests_per_minute"] = "Requests per minute must be 0 (no limit) or more."
    if not 1 <= judge.timeout_seconds <= 600:
        errors["timeout_seconds"] = "The timeout must be from 1 to 600 seconds."
    if judge.few_shot > 12:
        errors["few_shot"] = "At most 12 worked examples."
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def judge_create(*, collection: Collection, name: str, api_key: str = "", **fields: Any) -> Judge:
    """A new judge of the collection with its own rater account (inactive: it can't log in)."""
    unknown = set(fields) - set(EDITABLE)
    if unknown:
        raise ValidationError({f: "Not a judge setting." for f in sorted(unknown)})
    judge = Judge(collection=collection, name=(name or "").strip(), api_key=api_key or "", **fields)
    _validate(judge)
    user = User.objects.create_user(
        username=f"judge-{collection.pk}-{secrets.token_hex(4)}", first_name=judge.name[:150], is_active=False
    )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    judge.account = JudgeAccount.objects.create(user=user, collection=collection)
    judge.save()
    return judge


@transaction.atomic
def judge_update(*, judge: Judge, api_key: str | None = None, **fields: Any) -> Judge:
    """Change settings; ``api_key`` None keeps the key, "" removes it, anything else replaces it."""
    unknown = set(fields) - set(EDITABLE)
    if unknown:
        raise ValidationError({f: "Not a judge setting." for f in sorted(unknown)})
    for name, value in fields.items():
        setattr(judge, name, value.strip() if name == "name" and isinstance(value, str) else value)
    if api_key is not None:
        judge.api_key = api_key
    _validate(judge)
    judge.save()
    User.objects.filter(pk=judge.account.user_id).update(first_name=judge.name[:150])
    return judge


def judge_trust(*, judge: Judge, counts: bool, human_wins: bool = True) -> int:
    """Whether the judge's ratings count toward labels; recomputes the labels of its pairs."""
    return judge_trust_set(account=judge.account, counts=counts, human_wins=human_wins)


@transaction.atomic
def judge_delete(*, judge: Judge) -> None:
    """Remove the judge, its runs and its ratings (and so its part of any label)."""
    if judge.judgings.filter(status__in=ACTIVE_JUDGING).exists():
        raise ValidationError({"judge": "Cancel the judge's running judging first."})
    pairs = list(
        Rating.objects.filter(rater_id=judge.account.user_id).values_list("question_id", "answer_id")
    )
    user = judge.account.user
    user.delete()  # cascades to the account, the judge, its runs and its ratings
    labels_recompute(pairs=pairs)
