from django.urls import path

from api import (
    views_answers,
    views_clicks,
    views_collections,
    views_compare,
    views_engines,
    views_evaluations,
    views_files,
    views_ground_truth,
    views_imports,
    views_judges,
    views_online_tests,
    views_questions,
    views_queue,
    views_rankers,
    views_ratings,
    views_tokens,
    views_trainings,
    views_versions,
)
from api.views_export import VersionExportView

urlpatterns = [
    path("collections/", views_collections.CollectionListView.as_view(), name="api-collections"),
    path("collections/<slug:slug>/", views_collections.CollectionDetailView.as_view(), name="api-collection"),
    path(
        "collections/<slug:slug>/questions/", views_questions.QuestionListView.as_view(), name="api-questions"
    ),
    path("collections/<slug:slug>/answers/", views_answers.AnswerListView.as_view(), name="api-answers"),
    path("collections/<slug:slug>/ratings/", views_ratings.RatingCreateView.as_view(), name="api-ratings"),
    path(
        "collections/<slug:slug>/imports/",
        views_imports.CollectionImportView.as_view(),
        name="api-collection-import",
    ),
    path(
        "collections/<slug:slug>/imports/<int:import_id>/",
        views_imports.ImportDetailView.as_view(),
        name="api-collection-import-detail",
    ),
    path(
        "collections/<slug:slug>/compare/", views_compare.RunsCompareView.as_view(), name="api-runs-compare"
    ),
    path(
        "collections/<slug:slug>/ratings/export/",
        views_files.RatingsExportView.as_view(),
        name="api-ratings-export",
    ),
    path(
        "collections/<slug:slug>/ground-truth/",
        views_ground_truth.GroundTruthView.as_view(),
        name="api-ground-truth",
    ),
    path("collections/<slug:slug>/queue/", views_queue.QueueView.as_view(), name="api-queue"),
    path("rankers/", views_rankers.RankerListView.as_view(), name="api-rankers"),
    path("rankers/<int:ranker_id>/", views_engines.RankerDetailUpdateView.as_view(), name="api-ranker"),
    path("rankers/<int:ranker_id>/try/", views_engines.RankerTryView.as_view(), name="api-ranker-try"),
    path(
        "rankers/<int:ranker_id>/versions/",
        views_versions.RankerVersionCreateView.as_view(),
        name="api-ranker-versions",
    ),
    path(
        "rankers/<int:ranker_id>/evaluations/",
        views_evaluations.RankerEvaluationsView.as_view(),
        name="api-ranker-evaluations",
    ),
    path(
        "rankers/<int:ranker_id>/train/", views_trainings.RankerTrainView.as_view(), name="api-ranker-train"
    ),
    path(
        "rankers/<int:ranker_id>/versions/<int:version_id>/promote/",
        views_versions.VersionPromoteView.as_view(),
        name="api-version-promote",
    ),
    path(
        "rankers/<int:ranker_id>/versions/<int:version_id>/online-test/",
        views_online_tests.OnlineTestView.as_view(),
        name="api-version-online-test",
    ),
    path(
        "rankers/<int:ranker_id>/versions/<int:version_id>/online-tests/",
        views_online_tests.OnlineTestListView.as_view(),
        name="api-version-online-tests",
    ),
    path(
        "rankers/<int:ranker_id>/versions/<int:version_id>/online-test/stop/",
        views_online_tests.OnlineTestStopView.as_view(),
        name="api-version-online-test-stop",
    ),
    path(
        "rankers/<int:ranker_id>/versions/<int:version_id>/export/",
        VersionExportView.as_view(),
        name="api-version-export",
    ),
    path("tokens/", views_tokens.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/revoke/", views_tokens.TokenRevokeView.as_view(), name="api-token-revoke"),
    path("trainings/<int:training_id>/", views_trainings.TrainingDetailView.as_view(), name="api-training"),
    path(
        "evaluations/<int:run_id>/",
        views_evaluations.EvaluationDetailView.as_view(),
        name="api-evaluation-detail",
    ),
    path("collections/<slug:slug>/judges/", views_judges.JudgeListView.as_view(), name="api-judges"),
    path(
        "collections/<slug:slug>/implicit-judgments/",
        views_clicks.ImplicitJudgmentsView.as_view(),
        name="api-implicit-judgments",
    ),
    path(
        "collections/<slug:slug>/clicks-agreement/",
        views_clicks.ClicksAgreementView.as_view(),
        name="api-clicks-agreement",
    ),
    path(
        "collections/<slug:slug>/production-questions/",
        views_clicks.ProductionQuestionsView.as_view(),
        name="api-production-questions",
    ),
    path("judges/<int:judge_id>/", views_judges.JudgeDetailView.as_view(), name="api-judge"),
    path("judges/<int:judge_id>/test/", views_judges.JudgeTestView.as_view(), name="api-judge-test"),
    path(
        "judges/<int:judge_id>/judgings/", views_judges.JudgeJudgingsView.as_view(), name="api-judge-judgings"
    ),
    path(
        "judges/<int:judge_id>/agreement/",
        views_judges.JudgeAgreementView.as_view(),
        name="api-judge-agreement",
    ),
    path("judgings/<int:judging_id>/", views_judges.JudgingDetailView.as_view(), name="api-judging"),
    path(
        "judgings/<int:judging_id>/cancel/",
        views_judges.JudgingCancelView.as_view(),
        name="api-judging-cancel",
    ),
    path(
        "judgings/<int:judging_id>/resume/",
        views_judges.JudgingResumeView.as_view(),
        name="api-judging-resume",
    ),
    path(
        "evaluations/<int:run_id>/export/",
        views_files.EvaluationExportView.as_view(),
        name="api-evaluation-export",
    ),
]
