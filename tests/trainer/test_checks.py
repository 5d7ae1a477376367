"""A database from before the layered apps stops `migrate` with one plain message."""

from django.db import connection

from config.checks import old_layout_check


def test_old_layout_check_new_database_passes(db):
    assert old_layout_check(databases=["default"]) == []


def test_old_layout_check_old_tables_name_the_fix(db):
    with connection.cursor() as cursor:  # rolled back with the test's transaction
        cursor.execute("ALTER TABLE corpus_collection RENAME TO corpus_collection_moved")
        cursor.execute("CREATE TABLE trainer_collection (id integer)")
    [error] = old_layout_check(databases=["default"])
    assert error.id == "trainer.E001"
    assert "older version of Rank Trainer" in error.msg
    assert "mv var var.old && make run" in error.hint
