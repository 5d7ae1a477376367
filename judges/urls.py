from django.urls import path

from judges import views

urlpatterns = [
    path("c/<slug:slug>/judges/", views.judges_page, name="judges"),
    path("c/<slug:slug>/judges/new/", views.judge_new, name="judge-new"),
    path("c/<slug:slug>/judges/clicks/", views.clicks_page, name="judges-clicks"),
    path(
        "c/<slug:slug>/judges/clicks/questions/",
        views.clicks_questions_import,
        name="judges-clicks-questions",
    ),
    path("c/<slug:slug>/judges/<int:judge_id>/", views.judge_page, name="judge"),
    path("c/<slug:slug>/judges/<int:judge_id>/edit/", views.judge_edit, name="judge-edit"),
    path("c/<slug:slug>/judges/<int:judge_id>/trust/", views.judge_trust_set, name="judge-trust"),
    path("c/<slug:slug>/judges/<int:judge_id>/test/", views.judge_test_view, name="judge-test"),
    path("c/<slug:slug>/judges/<int:judge_id>/agreement/", views.agreement_page, name="judge-agreement"),
    path("c/<slug:slug>/judges/<int:judge_id>/judgings/", views.judging_start_view, name="judging-start"),
    path(
        "c/<slug:slug>/judges/<int:judge_id>/judgings/<int:judging_id>/cancel/",
        views.judging_cancel_view,
        name="judging-cancel",
    ),
    path(
        "c/<slug:slug>/judges/<int:judge_id>/judgings/<int:judging_id>/resume/",
        views.judging_resume_view,
        name="judging-resume",
    ),
    path(
        "c/<slug:slug>/judges/<int:judge_id>/judgings/<int:judging_id>/progress/",
        views.judging_progress,
        name="judging-progress",
    ),
]
