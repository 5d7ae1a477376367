from django.apps import AppConfig


class RankersConfig(AppConfig):
    name = "rankers"
    verbose_name = "Rankers and versions"
