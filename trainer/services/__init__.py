"""Writes that span the layers (one subject per module):

* :mod:`.imports` – answers, questions and judgments imported at once (``collection_import``).
* :mod:`.demo` – the Cranfield demo collection loaded unless it exists (``demo_collection_load``), and
  its first evaluation run here (``demo_evaluation_ensure``).
* :mod:`.learning` – a new version learned from the training labels (``ranker_train``), its export fitted.
* :mod:`.service_versions` – an http or engine ranker's versions: announced ones, and the service as it is.
* :mod:`.promotion` – a new version compared with the champion and the policy applied (``version_decide``);
  a promotion by hand, confirmed when the version is not measured better (``version_promote_by_hand``);
  an online test's stop rule and its online promotion policies (``online_test_settle``).
* :mod:`.trainings` – training jobs: started, claimed, run with progress, taken over, started when due.
* :mod:`.tokens` – API tokens issued (only the key's hash stored) and revoked.
"""

from .demo import DEMO_DATA_DIR, demo_collection_load, demo_evaluation_ensure
from .imports import IMPORT_RATER_DEFAULT, ImportSummary, collection_import, import_rater
from .learning import EXPORT_SLICES, Progress, export_progress, ranker_train
from .promotion import PromotionUnconfirmed, online_test_settle, version_decide, version_promote_by_hand
from .service_versions import ranker_version_announce, service_version_ensure
from .tokens import api_token_create, api_token_revoke, api_token_revoke_own
from .trainings import (
    PHASE_START,
    TRAINING_MAX_ATTEMPTS,
    TrainingConflict,
    TrainingRefused,
    TrainingUnavailable,
    auto_trainings_start,
    training_claim,
    training_progress_write,
    training_run,
    training_start,
    trainings_resume,
)

__all__ = [
    "DEMO_DATA_DIR",
    "EXPORT_SLICES",
    "IMPORT_RATER_DEFAULT",
    "PHASE_START",
    "TRAINING_MAX_ATTEMPTS",
    "ImportSummary",
    "PromotionUnconfirmed",
    "Progress",
    "TrainingConflict",
    "TrainingRefused",
    "TrainingUnavailable",
    "api_token_create",
    "api_token_revoke",
    "api_token_revoke_own",
    "auto_trainings_start",
    "collection_import",
    "demo_collection_load",
    "demo_evaluation_ensure",
    "export_progress",
    "import_rater",
    "ranker_train",
    "ranker_version_announce",
    "service_version_ensure",
    "training_claim",
    "training_progress_write",
    "training_run",
    "training_start",
    "trainings_resume",
    "version_decide",
    "online_test_settle",
    "version_promote_by_hand",
]
