from django.urls import path

from evaluation import views, views_certainty

app_name = "evaluation"
urlpatterns = [
    path("", views.index, name="index"),
    path("c/<slug:slug>/", views.dashboard, name="dashboard"),
    path("c/<slug:slug>/rankers/<int:ranker_id>/run/", views.run_start, name="run-start"),
    path("c/<slug:slug>/compare/", views.compare, name="compare"),
    path("c/<slug:slug>/certainty/", views_certainty.certainty_page, name="certainty"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/export/<str:fmt>/", views.run_export, name="run-export"),
    path("runs/<int:run_id>/progress/", views.run_progress, name="run-progress"),
    path("runs/<int:run_id>/questions/<int:question_id>/", views.question_detail, name="question"),
]
