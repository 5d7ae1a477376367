from django.apps import AppConfig


class RatersConfig(AppConfig):
    name = "raters"
    verbose_name = "Rating work: queue and pages"

    def ready(self) -> None:
        from raters import signals  # noqa: F401 - connects the receivers
