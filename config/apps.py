from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ConfigConfig(AppConfig):
    """The project shell as an installed app (no models): it registers the system checks."""

    name = "config"
    verbose_name = "Project shell"

    def ready(self) -> None:
        from config import checks  # noqa: F401 - registers the system checks


class RankTrainerAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with config.admin_site.RankTrainerAdminSite as ``admin.site`` (links back to
    the app, non-staff users sent to it)."""

    default = False  # named in INSTALLED_APPS; ConfigConfig stays this module's default
    default_site = "config.admin_site.RankTrainerAdminSite"
