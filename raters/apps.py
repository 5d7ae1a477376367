from django.apps import AppConfig


class RatersConfig(AppConfig):
    name = "raters"
    verbose_name = "Rating work: queue and pages"
