from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "corpus"
    verbose_name = "Collections, questions and answers"

    def ready(self) -> None:
        from corpus import signals  # noqa: F401 - connects the change markers' receivers
