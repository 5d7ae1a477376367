"""The admin as a part of Rank Trainer: links back to the app's pages, and a way out for non-staff users.

Trainers and raters work in the app, not in the admin (which is for staff). A signed-in user who is not
staff and opens /admin/ is sent to *My collections* with a message saying so, instead of the admin's login
form; someone logging in there with a non-staff account is told where to log in instead.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

# The admin's header lists at most this many of the user's collections' dashboards.
ADMIN_COLLECTION_LINKS = 10

NOT_STAFF = (
    "The admin is for staff accounts only. Everything trainers and raters do is here in Rank Trainer: "
    "dashboards, rating, rankers and collection settings are all under My collections."
)


class StaffLoginForm(AdminAuthenticationForm):
    """The admin's login form; a correct login of a non-staff account says where that account works."""

    def confirm_login_allowed(self, user) -> None:
        if user.is_active and not user.is_staff:
            raise ValidationError(
                "This account is not a staff account, so it cannot use the admin. Trainers and raters "
                f"log in to Rank Trainer at {reverse('login')} instead.",
                code="not_staff",
            )
        super().confirm_login_allowed(user)


class RankTrainerAdminSite(admin.AdminSite):
    site_header = "Rank Trainer administration"
    site_title = "Rank Trainer admin"
    index_title = "Users, collections and their data"
    site_url = "/"  # the admin's "View site" link: My collections
    login_form = StaffLoginForm

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        if request.user.is_authenticated and not self.has_permission(request):
            messages.info(request, NOT_STAFF)
            return redirect("home")
        return super().login(request, extra_context)

    def each_context(self, request: HttpRequest) -> dict:
        # Imported here, not for a cycle: this module is loaded by the admin's AppConfig before the app
        # registry is ready, and the selector imports models.
        from corpus.selectors import collections_for_user

        context = super().each_context(request)
        if request.user.is_authenticated:
            collections = collections_for_user(user=request.user).order_by("name")
            context["app_collections"] = list(collections[: ADMIN_COLLECTION_LINKS + 1])
        return context
