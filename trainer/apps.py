from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class TrainerConfig(AppConfig):
    name = "trainer"
    verbose_name = "API tokens and the training loop"

    def ready(self) -> None:
        from trainer import checks  # noqa: F401 - registers the system checks


class RankTrainerAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with trainer.admin_site.RankTrainerAdminSite as ``admin.site`` (links back to
    the app, non-staff users sent to it)."""

    default = False  # named in INSTALLED_APPS; TrainerConfig stays this module's default
    default_site = "trainer.admin_site.RankTrainerAdminSite"
