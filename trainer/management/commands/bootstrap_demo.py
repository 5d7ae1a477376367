"""Make a fresh install usable: the demo collection, a default ranker evaluated once (so the dashboard
opens on a headline), a demo trainer and a demo rater.

Safe to run on every start: nothing is duplicated. The demo passwords are generated once, kept in
var/demo-credentials.json, and printed each time so the person starting the app can log in (`make run`
passes --no-logins: bin/run prints them once the web server and the worker are up, as the last lines).
"""

from __future__ import annotations

import json
import secrets
import string
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from corpus.models import Collection, Role
from corpus.services import membership_set
from evaluation.models import RunStatus
from evaluation.numbers import figure
from evaluation.services import EvaluationUnavailable
from rankers.models import Ranker, RankerKind
from rankers.services import ranker_create
from trainer.demo_vectors import demo_vectors_seed
from trainer.services import demo_collection_load, demo_evaluation_ensure

DEMO_USERS = {"trainer": Role.TRAINER, "rater": Role.RATER}


DEMO_RANKER = "Built-in ranker"

# Letters and digits only: a password starting with "-" reads as an option when pasted into a command
# (`curl -u`, a shell), and a double click selects a word only up to a "-". 12 of 62 symbols: 71 bits
# (the token_urlsafe(9) this replaces: 72, and one password in 64 started with "-").
PASSWORD_ALPHABET = string.ascii_letters + string.digits
PASSWORD_LENGTH = 12


def demo_password() -> str:
    return "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))


class Command(BaseCommand):
    help = "Load the Cranfield demo collection and demo logins if they are missing (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="URL to print for logging in")
        parser.add_argument(
            "--no-logins", action="store_true", help="don't print the URL and logins (bin/run prints them)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        credentials_file = settings.VAR_DIR / "demo-credentials.json"
        credentials = json.loads(credentials_file.read_text()) if credentials_file.exists() else {}
        with transaction.atomic():
            created = demo_collection_load()
            collection = Collection.objects.get(slug="cranfield")
            if created:
                self.stdout.write(self.style.SUCCESS(f"Loaded demo collection {collection.name}"))
            if not Ranker.objects.filter(collection=collection, name=DEMO_RANKER).exists():
                ranker_create(
                    collection=collection, name=DEMO_RANKER, kind=RankerKind.BUILTIN, is_default=True
                )
            User = get_user_model()
            for username, role in DEMO_USERS.items():
                user = User.objects.filter(username=username).first()
                if user is None or username not in credentials:
                    password = credentials.get(username) or demo_password()
                    user = user or User(username=username)
                    user.set_password(password)
                    user.is_staff = role == Role.TRAINER
                    user.save()
                    credentials[username] = password
                membership_set(collection=collection, user=user, role=role)
        # The demo answers' vectors ship with it: the first training's embeddings build encodes none.
        demo_vectors_seed()
        self._evaluate(collection)
        credentials_file.parent.mkdir(parents=True, exist_ok=True)
        credentials_file.write_text(json.dumps(credentials))
        credentials_file.chmod(0o600)
        if options["no_logins"]:
            return
        self.stdout.write(
            f"\n  Rank Trainer is starting at {options['url']}\n"
            f"  trainer login: trainer / {credentials['trainer']}\n"
            f"  rater login:   rater / {credentials['rater']}\n"
        )

    def _evaluate(self, collection: Collection) -> None:
        """The champion's first evaluation, here (57 test questions: about a second), unless it has one."""
        started = time.perf_counter()
        try:
            run = demo_evaluation_ensure(collection=collection)
        except EvaluationUnavailable as exc:
            self.stdout.write(self.style.WARNING(f"No first evaluation: {exc}"))
            return
        if run is None:
            return
        seconds = time.perf_counter() - started
        version = f" version {run.ranker_version.label}" if run.ranker_version else ""
        if run.status == RunStatus.SUCCEEDED:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Evaluated {run.ranker.name}{version} on {run.questions_done} test questions: "
                    f"NDCG@{run.ndcg_k} {figure(run.ndcg_mean)} ({seconds:.1f} s)"
                )
            )
        else:
            reason = run.first_error or run.error
            self.stdout.write(
                self.style.WARNING(
                    f"The first evaluation did not finish ({reason}); run one from the dashboard."
                )
            )
