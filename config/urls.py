"""The site's URLs: the admin, logging in and out, /healthz, the API docs, then each app's pages and the API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from config.csp import csp_docs
from config.health import healthz

handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico on pages without <link rel=icon> (JSON, the admin's).
    path("favicon.ico", lambda request: redirect(static("favicon.svg")), name="favicon"),
    path("", include("trainer.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI's start script from its own URL (the "split" view), not inline: the page keeps the CSP.
    path(
        "api/docs/",
        csp_docs(
            SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html")
        ),
        name="api-docs",
    ),
    path(
        "api/redoc/",
        csp_docs(SpectacularRedocView.as_view(url_name="api-schema", template_name="api/redoc.html")),
        name="api-redoc",
    ),
    path("api/", include("api.urls")),
    path("", include("judges.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("", include("raters.urls")),
]
