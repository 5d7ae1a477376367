from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from trainer.selectors import collections_for_user


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "ratings/home.html", {"collections": collections_for_user(user=request.user)})
