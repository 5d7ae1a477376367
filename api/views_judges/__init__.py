"""The REST API of judges: CRUD, test connection, judging runs (start, status, cancel, resume) and the
agreement figures. Thin views over ``judges.services`` and ``judges.selectors``; trainers only (raters
get 403, other collections 404). The API key is write-only: accepted on create and update, never returned.

A module per operation, its serializers beside its views:

* :mod:`.lookups` – the judge or judging run a trainer asks for (404 to who cannot see it, 403 to raters).
* :mod:`.judges` – a collection's judges: list, create, one, change (settings or trust), delete.
* :mod:`.connection` – test connection: grade one pair now, nothing saved, with the raw reply.
* :mod:`.judgings` – judging runs: a judge's runs, start one, one run, cancel, resume.
* :mod:`.agreement` – how a judge agrees with people, and its least certain judgments.
"""

from api.views_judges.agreement import (
    AgreementSerializer,
    JudgeAgreementView,
    SystemSerializer,
    UncertainSerializer,
)
from api.views_judges.connection import JudgeTestView, TestOutcomeSerializer
from api.views_judges.judges import (
    CalibrationSerializer,
    JudgeDetailView,
    JudgeListView,
    JudgeSerializer,
    JudgeWriteSerializer,
)
from api.views_judges.judgings import (
    CONFLICT,
    JudgeJudgingsView,
    JudgingCancelView,
    JudgingDetailView,
    JudgingResumeView,
    JudgingSerializer,
    JudgingStartSerializer,
    PairErrorSerializer,
)

__all__ = [
    "CONFLICT",
    "AgreementSerializer",
    "CalibrationSerializer",
    "JudgeAgreementView",
    "JudgeDetailView",
    "JudgeJudgingsView",
    "JudgeListView",
    "JudgeSerializer",
    "JudgeTestView",
    "JudgeWriteSerializer",
    "JudgingCancelView",
    "JudgingDetailView",
    "JudgingResumeView",
    "JudgingSerializer",
    "JudgingStartSerializer",
    "PairErrorSerializer",
    "SystemSerializer",
    "TestOutcomeSerializer",
    "UncertainSerializer",
]
