from django.apps import AppConfig


class UbiConfig(AppConfig):
    name = "ubi"
    verbose_name = "User Behavior Insights (production queries and events)"
