"""Solr rankers saved with the old preset's edismax parser move to the "simple" parser.

edismax read a question as query syntax ("id:184" searched the id field, a leading "-" asked for every
answer without the word). Only configs whose request params are exactly the old preset's defaults are
changed; a config someone edited keeps what they chose.
"""

from django.db import migrations

OLD = {"defType": "edismax", "qf": "title^2 text"}


def forwards(apps, schema_editor):
    Ranker = apps.get_model("rankers", "Ranker")
    for ranker in Ranker.objects.filter(kind="engine"):
        config = ranker.config or {}
        params = (config.get("request") or {}).get("params")
        if config.get("preset") != "solr" or not isinstance(params, dict):
            continue
        if (
            params.get("defType") != OLD["defType"]
            or params.get("qf") != OLD["qf"]
            or "q.operators" in params
        ):
            continue
        params["defType"] = "simple"
        params["q.operators"] = "WHITESPACE"
        ranker.save(update_fields=["config"])


class Migration(migrations.Migration):
    dependencies = [("rankers", "0003_settled_policy")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
