from django.urls import path

from raters.views import contribution, home, next_question, pair, progress, question

urlpatterns = [
    path("", home.home, name="home"),
    path("c/<slug:slug>/rate/", next_question.rate_next, name="rate-next"),
    path("c/<slug:slug>/rate/<int:question_id>/", question.rate_question, name="rate-question"),
    path("c/<slug:slug>/rate/<int:question_id>/skip/", question.rate_skip, name="rate-skip"),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/", pair.rate_answer, name="rate-answer"
    ),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/undo/",
        pair.rate_undo,
        name="rate-undo",
    ),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/note/",
        pair.rate_note,
        name="rate-note",
    ),
    path("c/<slug:slug>/progress/", progress.training_progress, name="rating-progress"),
    path("c/<slug:slug>/contribution/", contribution.rate_contribution, name="rate-contribution"),
]
