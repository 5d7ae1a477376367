from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from trainer import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("api/", include("trainer.api.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("", include("ratings.urls")),
]
