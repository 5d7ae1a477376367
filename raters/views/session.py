"""What a rater's session keeps: the tasks shown (the answers of a question, so reloads show the same page)
and when the rating session started."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from corpus.models import Collection
from raters.next_task.task import Task
from raters.views.access import RatingRequest

# A task (the answers shown for a question) is kept this long in the session so reloads show the same page.
TASK_LIFETIME = timedelta(hours=12)
TASKS_KEPT = 20
SESSION_TASKS = "rating_tasks"
SESSION_STARTED = "rating_session_started"


def _task_key(collection: Collection, question_id: int) -> str:
    return f"{collection.pk}:{question_id}"


def remember_task(request: RatingRequest, collection: Collection, task: Task) -> dict:
    tasks = request.session.get(SESSION_TASKS, {})
    entry = {
        "answers": task.answer_ids,
        "reason": task.reason,
        "priority": task.priority,
        "at": timezone.now().isoformat(),
    }
    tasks[_task_key(collection, task.question_id)] = entry
    if len(tasks) > TASKS_KEPT:
        for key in sorted(tasks, key=lambda k: tasks[k]["at"])[: len(tasks) - TASKS_KEPT]:
            del tasks[key]
    request.session[SESSION_TASKS] = tasks
    return entry


def remembered_task(request: RatingRequest, collection: Collection, question_id: int) -> dict | None:
    entry = request.session.get(SESSION_TASKS, {}).get(_task_key(collection, question_id))
    if entry is None or timezone.now() - datetime.fromisoformat(entry["at"]) > TASK_LIFETIME:
        return None
    return entry


def session_started(request: RatingRequest) -> datetime:
    started = request.session.get(SESSION_STARTED)
    if started is None:
        started = timezone.now().isoformat()
        request.session[SESSION_STARTED] = started
    return datetime.fromisoformat(started)
