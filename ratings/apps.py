from django.apps import AppConfig


class RatingsConfig(AppConfig):
    name = "ratings"
    verbose_name = "Ratings and labels"

    def ready(self) -> None:
        from ratings import signals  # noqa: F401 - connects the receivers
