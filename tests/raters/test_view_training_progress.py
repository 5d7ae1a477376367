import re

import pytest
from django.urls import reverse

from corpus.models import Role
from ratings.services import question_skip, rating_record

pytestmark = pytest.mark.django_db

URL = reverse("rating-progress", args=["tiny"])


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_training_progress_trainer_sees_coverage_agreement_and_raters(
    client, corpus, trainer, rater, make_user
):
    a, q = corpus.a, corpus.q
    ann = make_user("ann", collection=corpus.collection, role=Role.RATER)
    rating_record(rater=rater, question=q["q1"], answer=a["d1"], stars=3)
    rating_record(rater=ann, question=q["q1"], answer=a["d1"], stars=2)
    rating_record(rater=rater, question=q["q1"], answer=a["d2"], stars=0)
    rating_record(rater=ann, question=q["q1"], answer=a["d2"], stars=0)
    rating_record(rater=rater, question=q["q2"], answer=a["d3"], stars=1)
    question_skip(rater=ann, question=q["q3"], reason="")
    client.force_login(trainer)

    response = client.get(URL)

    page = text(response.content.decode())
    assert response.status_code == 200
    # Train: q1 and q3 (4 top pairs, 2 labelled); test: q2 (2 top pairs, 1 labelled).
    assert "Train 2 1 (50%) 4 2 (50%)" in page
    assert "Test 1 1 (100%) 2 1 (50%)" in page
    # Units (3, 2) and (0, 0): o23 = o32 = 1, o00 = 2; n0 = 2, n2 = 1, n3 = 1, n = 4.
    # Ordinal δ²(2,3) = (1 + 1 − 1)² = 1; δ²(0,2) = (2 + 0 + 1 − 1.5)² = 2.25; δ²(0,3) = (2 + 0 + 1 + 1 − 1.5)² = 6.25.
    # α = 1 − 3 · 2 / (2 · (2·1·2.25 + 2·1·6.25 + 1·1·1)) = 1 − 6/36 = 0.833.
    assert (
        "Krippendorff's alpha (ordinal): 0.833 over 2 pairs with 2 or more raters (4 ratings). Reliable"
        in page
    )
    # rita: on (q1,d1) 3 − 2 = +1, on (q1,d2) 0; leniency +0.50 over 2 shared pairs. ann the mirror image.
    assert "rita 3 2 1.33 +0.50 2 0" in page
    assert "ann 2 1 1.00 -0.50 2 1" in page


def test_training_progress_without_shared_pairs_explains_alpha_missing(client, corpus, trainer, rater):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)
    client.force_login(trainer)

    page = text(client.get(URL).content.decode())

    assert (
        "Not measured yet: it needs pairs rated by two or more people who did not all give the same stars"
        in page
    )
    assert "rita 1 1 3.00 0" in page


def test_training_progress_ratings_per_day(client, corpus, trainer, rater):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)
    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d2"], stars=1)
    client.force_login(trainer)

    html = client.get(URL).content.decode()

    assert re.search(r'<td class="num">2</td><td class="num">2</td></tr>', html)


def test_training_progress_rater_403(client, corpus, rater):
    client.force_login(rater)

    response = client.get(URL)

    assert response.status_code == 403
    assert "Only the collection&#x27;s trainers can see this page." in response.content.decode()


def test_training_progress_anonymous_redirected_non_member_404(client, corpus, outsider):
    assert client.get(URL)["Location"] == f"/login/?next={URL}"
    client.force_login(outsider)
    assert client.get(URL).status_code == 404


def test_training_progress_superuser_allowed(client, corpus, make_user):
    client.force_login(make_user("root", is_superuser=True))

    assert client.get(URL).status_code == 200


def test_training_progress_shows_the_rating_budget_and_what_training_questions_had(
    client, corpus, trainer, rater
):
    a, q = corpus.a, corpus.q
    collection = corpus.collection
    collection.rating_budget, collection.overlap_target_raters, collection.overlap_fraction = 20, 3, 0.1
    collection.save()
    rating_record(rater=rater, question=q["q1"], answer=a["d1"], stars=3)
    rating_record(rater=rater, question=q["q1"], answer=a["d2"], stars=0)
    rating_record(rater=rater, question=q["q2"], answer=a["d3"], stars=1)  # a test question: not counted
    client.force_login(trainer)

    page = text(client.get(URL).content.decode())

    # 20 // 1 = 20 answers by one person; 20 // 3 = 6 by three. Train: q1 and q3, 2 ratings: 1.0 each,
    # 2 / (20 · 2) = 5% of the budget.
    assert (
        "The rating queue asks for up to 20 ratings per question : 20 answers rated by 1 person each on most "
        "questions, and 6 answers rated by 3 people each on the 10% of questions sampled to measure "
        "agreement. Training questions so far: 2 ratings on 2 questions (1.0 per question, 5% of the budget)."
    ) in page
