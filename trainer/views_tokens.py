"""The Tokens page: a user's own API tokens, with expiry and last use; create one (its key shown once) or
revoke one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from corpus.models import Collection, Role
from corpus.selectors import collections_for_user
from trainer.selectors import tokens_of
from trainer.services import api_token_create, api_token_revoke_own
from trainer.views import signed_in_user


class TokenForm(forms.Form):
    collection = forms.ModelChoiceField(queryset=Collection.objects.none(), to_field_name="slug")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.RATER)
    name = forms.CharField(max_length=200, required=False, help_text="What it is for, e.g. “ranker service”.")
    days = forms.IntegerField(
        min_value=0,
        max_value=3650,
        initial=90,
        help_text="Days until it expires; 0: never (not recommended).",
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        collection = self.fields["collection"]
        assert isinstance(collection, forms.ModelChoiceField)
        collection.queryset = collections_for_user(user=user)


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None, user=request.user)
    new_key = ""
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = api_token_create(
                collection=form.cleaned_data["collection"],
                user=signed_in_user(request),
                role=form.cleaned_data["role"],
                name=form.cleaned_data["name"],
                days=form.cleaned_data["days"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(
                request, f"Token “{token.name}” created. Copy its key now: it is not shown again."
            )
            form = TokenForm(user=request.user)
    return render(
        request,
        "trainer/tokens.html",
        {"tokens": tokens_of(user=request.user), "form": form, "new_key": new_key},
        status=400 if request.method == "POST" and not new_key else 200,
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = api_token_revoke_own(user=signed_in_user(request), token_id=token_id)
    if token is None:
        raise Http404("No such token of yours.")
    messages.success(request, f"Token “{token.name}” ({token.key_prefix}…) revoked.")
    return redirect("tokens")
