from django.apps import AppConfig


class TrainerConfig(AppConfig):
    name = "trainer"
    verbose_name = "Collections and rankers"
