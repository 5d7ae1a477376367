from django.urls import path

from evaluation.views import compare, dashboard, how_sure, question, runs

app_name = "evaluation"
urlpatterns = [
    path("", dashboard.index, name="index"),
    path("c/<slug:slug>/", dashboard.dashboard, name="dashboard"),
    path("c/<slug:slug>/rankers/<int:ranker_id>/run/", runs.run_start, name="run-start"),
    path("c/<slug:slug>/compare/", compare.compare, name="compare"),
    path("c/<slug:slug>/certainty/", how_sure.certainty_page, name="certainty"),
    path("runs/<int:run_id>/", runs.run_detail, name="run"),
    path("runs/<int:run_id>/export/<str:fmt>/", runs.run_export, name="run-export"),
    path("runs/<int:run_id>/progress/", runs.run_progress, name="run-progress"),
    path("runs/<int:run_id>/questions/<int:question_id>/", question.question_detail, name="question"),
]
