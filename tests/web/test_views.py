"""The page's view helpers on their own: the edges the served pages rarely reach."""

from __future__ import annotations

from prixfixe.routines.report import Failure, Report, StepResult
from prixfixe.web import views
from prixfixe.web.app import number


def test_numbers_get_separators_and_anything_else_is_left_as_it_is() -> None:
    assert number(1234567) == "1,234,567"
    assert number(12) == "12"
    assert number(True) == "True"
    assert number("not read yet") == "not read yet"


def test_plural_nouns_read_as_english() -> None:
    assert views.plural_noun("property entry") == "property entries"
    assert views.plural_noun("tool") == "tools"
    assert views.plural_noun("key") == "keys"
    assert views.plural_noun("resources") == "resources"


def test_an_entry_without_a_name_is_named_by_what_it_is_never_its_class() -> None:
    class Nameless:
        description = "  Does a thing.\nMore.  "

    entry = views._entry(Nameless(), "curation rule", 3)
    assert entry == views.Entry("curation rule 3", "Does a thing.")


def test_step_data_of_another_shape_adds_no_repository_and_a_failure_without_error_is_named() -> (
    None
):
    report = Report(
        version="1.0",
        routine="morning",
        generation=1,
        status="failed",
        started="2026-01-01T00:00:00",
        ms=1,
        steps=[
            StepResult(
                name="repos", type="git-status", status="ok", version="9.0", data={"v9": []}
            ),
            StepResult(name="odd", type="script", status="failed", version="1.0"),
            StepResult(
                name="oven",
                type="script",
                status="failed",
                version="1.0",
                error=Failure(kind="exit-status", message="exit 1"),
            ),
        ],
    )
    assert views._troubled_repos(report) == []
    assert views._failed_steps(report) == [
        views.FailedStep("odd", "script", "error", ""),
        views.FailedStep("oven", "script", "exit-status", "exit 1"),
    ]
