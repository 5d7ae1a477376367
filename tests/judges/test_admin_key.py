"""The admin never shows a judge's API key."""

from django.test import Client

from judges.services import judge_create


def test_admin_judge_pages_never_show_the_key(judged, make_user):
    judge = judge_create(
        collection=judged.collection, name="Keyed", kind="builtin", api_key="sk-admin-secret"
    )
    admin = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)

    pages = [f"/admin/judges/judge/{judge.pk}/change/", "/admin/judges/judge/"]
    bodies = [client.get(page) for page in pages]

    assert [b.status_code for b in bodies] == [200, 200]
    assert all("sk-admin-secret" not in b.content.decode() for b in bodies)
    assert "API key set" in bodies[0].content.decode()
