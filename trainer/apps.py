from django.apps import AppConfig


class TrainerConfig(AppConfig):
    name = "trainer"
    verbose_name = "API tokens and the training loop"

    def ready(self) -> None:
        from trainer import checks  # noqa: F401 - registers the system checks
