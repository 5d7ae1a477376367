"""Trainer pages for a collection's rankers: champions, versions, champion changes, training with a live
progress block, training settings, and one version's figures with a Promote button.

Access as on the other trainer pages: anonymous users log in first, non-members get 404 (we do not
reveal which collections exist), raters get 403. Every POST redirects (303) back to a page that shows
the outcome, so the pages work without JavaScript; htmx only polls the progress block.

* :mod:`.access` – the collection a trainer manages, its ranker, and the 303 back (every page's start).
* :mod:`.page` – the rankers page: a panel per ranker, and what the training labels allow.
* :mod:`.training` – start a training, its progress block, and the training settings.
* :mod:`.version` – one version's page, promoting it by hand, and downloading its model for the engine.
"""

from trainer.views_rankers.page import HISTORY_SHOWN, RankerPanel, rankers_page
from trainer.views_rankers.training import ranker_settings, ranker_train, ranker_training
from trainer.views_rankers.version import (
    VERSION_RUNS_SHOWN,
    version_detail,
    version_export_download,
    version_promote_view,
)

__all__ = [
    "HISTORY_SHOWN",
    "VERSION_RUNS_SHOWN",
    "RankerPanel",
    "ranker_settings",
    "ranker_train",
    "ranker_training",
    "rankers_page",
    "version_detail",
    "version_export_download",
    "version_promote_view",
]
