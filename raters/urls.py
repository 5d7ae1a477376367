from django.urls import path

from raters import views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/<slug:slug>/rate/", views.rate_next, name="rate-next"),
    path("c/<slug:slug>/rate/<int:question_id>/", views.rate_question, name="rate-question"),
    path("c/<slug:slug>/rate/<int:question_id>/skip/", views.rate_skip, name="rate-skip"),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/", views.rate_answer, name="rate-answer"
    ),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/undo/",
        views.rate_undo,
        name="rate-undo",
    ),
    path(
        "c/<slug:slug>/rate/<int:question_id>/answers/<int:answer_id>/note/",
        views.rate_note,
        name="rate-note",
    ),
    path("c/<slug:slug>/progress/", views.training_progress, name="rating-progress"),
]
