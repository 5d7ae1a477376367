"""The admin's ranker page never shows a ranker's secrets."""

from __future__ import annotations

import pytest

from rankers.services import ranker_create

pytestmark = pytest.mark.django_db


def test_admin_ranker_page_masks_secrets(client, collection, make_user):
    admin = make_user("root", is_staff=True, is_superuser=True)
    ranker = ranker_create(
        collection=collection,
        name="ES",
        kind="engine",
        config={
            "preset": "elasticsearch",
            "url": "http://127.0.0.1:9200/a/_search",
            "auth_header": "ApiKey c2VjcmV0",
            "request": {"headers": {"X-Tenant": "tenant-secret"}},
        },
    )
    client.force_login(admin)

    response = client.get(f"/admin/rankers/ranker/{ranker.pk}/change/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "c2VjcmV0" not in page and "tenant-secret" not in page
    assert "&quot;auth_header&quot;: &quot;********&quot;" in page
