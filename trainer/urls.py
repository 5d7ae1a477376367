"""The trainer's pages: collections and their members and imports, rankers and their versions, API tokens."""

from django.urls import path

from trainer import views, views_engines, views_exports, views_online, views_rankers, views_tokens

urlpatterns = [
    path("collections/new/", views.collection_new, name="collection-new"),
    path("c/<slug:slug>/manage/", views.collection_manage, name="collection-manage"),
    path("c/<slug:slug>/manage/members/", views.collection_member_set, name="collection-member-set"),
    path(
        "c/<slug:slug>/manage/members/<int:membership_id>/remove/",
        views.collection_member_remove,
        name="collection-member-remove",
    ),
    path("c/<slug:slug>/manage/import/", views.collection_import_upload, name="collection-import"),
    path(
        "c/<slug:slug>/manage/imports/<int:import_id>/",
        views.collection_import_option,
        name="collection-import-option",
    ),
    path("c/<slug:slug>/manage/export/", views_exports.collection_export, name="collection-export"),
    path(
        "c/<slug:slug>/manage/export/<str:what>/",
        views_exports.collection_export_file,
        name="collection-export-file",
    ),
    path("c/<slug:slug>/rankers/", views_rankers.rankers_page, name="rankers"),
    path("c/<slug:slug>/rankers/engine/new/", views_engines.engine_ranker_new, name="ranker-engine-new"),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/engine/",
        views_engines.engine_ranker_edit,
        name="ranker-engine",
    ),
    path("c/<slug:slug>/rankers/<int:ranker_id>/try/", views_engines.ranker_try_view, name="ranker-try"),
    path("c/<slug:slug>/rankers/<int:ranker_id>/train/", views_rankers.ranker_train, name="ranker-train"),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/training/",
        views_rankers.ranker_training,
        name="ranker-training",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/settings/",
        views_rankers.ranker_settings,
        name="ranker-settings",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/",
        views_rankers.version_detail,
        name="ranker-version",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/promote/",
        views_rankers.version_promote_view,
        name="ranker-version-promote",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/online-test/",
        views_online.version_online_test,
        name="ranker-version-online-test",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/online-test/start/",
        views_online.version_online_test_start,
        name="ranker-version-online-test-start",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/online-test/stop/",
        views_online.version_online_test_stop,
        name="ranker-version-online-test-stop",
    ),
    path(
        "c/<slug:slug>/rankers/<int:ranker_id>/versions/<int:version_id>/export/<str:fmt>/",
        views_rankers.version_export_download,
        name="ranker-version-export",
    ),
    path("tokens/", views_tokens.tokens_page, name="tokens"),
    path("tokens/<int:token_id>/revoke/", views_tokens.token_revoke, name="token-revoke"),
]
