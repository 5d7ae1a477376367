#!/usr/bin/env python
"""Django's command-line utility for Rank Trainer.

A settings error (a variable missing or unusable) stops the command with one line naming the
variable, not a traceback. Only commands that serve requests need SECRET_KEY.
"""

import os
import sys

# They sign sessions and cookies with SECRET_KEY; every other command runs without one.
SERVING_COMMANDS = {"runserver", "testserver"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured

    from config.env import ImproperlyConfiguredEnv, allow_missing_secret_key

    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command not in SERVING_COMMANDS:
        allow_missing_secret_key()
    try:
        from django.conf import settings

        settings.INSTALLED_APPS  # noqa: B018 - loads the settings, which check the environment
    except ImproperlyConfiguredEnv as exc:
        sys.exit(f"error: {exc}")

    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        if "SECRET_KEY" not in str(exc):
            raise
        sys.exit(f"error: SECRET_KEY is required by '{command}' but not set (or set DEBUG=1 for development)")


if __name__ == "__main__":
    main()
