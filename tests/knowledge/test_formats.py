"""HTML becomes markdown that chunks along its headings, PDF (with the pdf extra) a section per
page; hostile or unreadable files are skipped with a reason, never a crash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from prixfixe.knowledge import catalog
from prixfixe.knowledge.chunking import split
from prixfixe.knowledge.formats import (
    MAX_DOCUMENT_BYTES,
    MAX_HTML_DEPTH,
    PDF_EXTRA,
    NotADocument,
    html_to_markdown,
    pdf_to_markdown,
)
from prixfixe.knowledge.ingest import Skipped
from prixfixe.store.api import OwnerSlice
from tests.knowledge.conftest import Ingest
from tests.knowledge.documents import (
    PAGE,
    encrypt_pdf,
    long_ordered_list,
    make_nested_pdf,
    make_pdf,
    nested_html,
)


def test_html_becomes_markdown_that_chunks_along_its_headings() -> None:
    converted = html_to_markdown(PAGE.encode())
    assert converted.chunking == "markdown"
    assert converted.fallback_title == "The Garden page"
    chunks = split(converted.text, "markdown")
    assert [c.heading for c in chunks] == ["", "Garden", "Watering", "Rain"]
    assert chunks[1].body.startswith("# Garden\n")
    assert "[worm farm](https://example.org/worms)" in converted.text
    assert "Compost **heaps**" in converted.text
    assert "- barrels\n- butts" in converted.text
    assert "# not a heading" in chunks[2].body  # code stays code, not a heading


def test_html_scripts_styles_and_unsafe_urls_are_dropped() -> None:
    text = html_to_markdown(PAGE.encode()).text
    for gone in ("tracking quokka", "color: green", "enable scripts", "javascript:", "data:"):
        assert gone not in text
    assert "Home" in text  # a link to a script keeps its text
    assert "a worm" in text  # an inline image keeps its alt text
    assert "The Garden page" not in text  # the <title> is the title, not body text


def test_html_honours_its_declared_charset() -> None:
    page = '<meta charset="iso-8859-1"><h1>Caf\xe9</h1>'.encode("latin-1")
    converted = html_to_markdown(page)
    assert converted.text == "# Café\n"


def test_html_nested_too_deeply_to_convert_is_kept_as_plain_text() -> None:
    depth = 50_000
    page = ("<div>" * depth + "<h1>deep</h1> words" + "</div>" * depth).encode()
    assert len(page) < MAX_DOCUMENT_BYTES
    converted = html_to_markdown(page)
    assert converted.chunking == "text"
    assert converted.text == "deep\nwords\n"
    assert depth > MAX_HTML_DEPTH


LISTS = (
    "<ol><li>one</li><li>two<br>lines</li><li></li><li>four<ul><li>a</li><li>b</li></ul></li>"
    "</ol><p>between</p><ol start='7'><li>seven<ol><li>inner</li></ol></li>"
    "<li><p>para</p><p>graphs</p></li></ol><ol start='x'><li>bad start</li></ol>"
    "<ul><li>u<ol><li>o</li></ol></li></ul><pre><b>kept <i>as</i></b>\n  code</pre>"
)


def test_ordered_lists_and_pre_convert_exactly_as_markdownify_converts_them() -> None:
    """The one-pass numbering and parent lookup change the cost, never the markdown."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    options = {"heading_style": "ATX", "bullets": "-", "escape_underscores": False}
    plain = MarkdownConverter(**options).convert_soup(BeautifulSoup(LISTS, "html.parser"))
    assert html_to_markdown(LISTS.encode()).text == plain.strip() + "\n"
    assert "2. two  \n   lines\n4. four\n   - a" in plain  # the empty third item is counted
    assert "7. seven\n   1. inner\n8. para" in plain
    assert "```\nkept as\n  code\n```" in plain  # inside <pre>: no emphasis, spaces kept


def test_a_long_ordered_list_is_numbered_in_one_pass() -> None:
    # markdownify counted each item's earlier siblings: 10,000 items took 6.7 s of CPU here,
    # 96,000 (0.96 MB) would take about ten minutes; numbered in one pass, about 3.5 s.
    converted = html_to_markdown(long_ordered_list(30_000))
    lines = converted.text.splitlines()
    assert (lines[0], lines[-1], len(lines)) == ("1. x", "30000. x", 30_000)


def test_html_nested_near_the_depth_limit_converts_within_its_cpu_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = nested_html(250_000)
    converted = html_to_markdown(page)
    assert converted.chunking == "markdown"
    assert converted.text.count("x") == page.count(b"<span>")
    # With no budget at all, it is refused as soon as it is checked, with the reason.
    monkeypatch.setattr("prixfixe.knowledge.formats.HTML_BASE_SECONDS", 0.0)
    monkeypatch.setattr("prixfixe.knowledge.formats.HTML_SECONDS_PER_MB", 0.0)
    with pytest.raises(NotADocument, match="an HTML file whose text costs more than 0 s of CPU"):
        html_to_markdown(page)


def test_html_over_its_budget_is_refused_while_converting_not_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The budget is checked at every element: once it is spent (here: at the 50th check,
    whatever the clock says), no further element is converted, and the refusal is not turned
    into a plain-text fallback (which would cost more again)."""
    from markdownify import MarkdownConverter

    from prixfixe.knowledge import formats

    checks: list[int] = []
    over = formats._CpuBudget.over

    def spent_at_the_50th(self: formats._CpuBudget) -> NotADocument | None:
        checks.append(1)
        return NotADocument("spent") if len(checks) >= 50 else over(self)

    converted_tags: list[object] = []
    process_tag = MarkdownConverter.process_tag

    def counting(self: object, node: object, parent_tags: object = None) -> object:
        converted_tags.append(node)
        return process_tag(self, node, parent_tags=parent_tags)

    monkeypatch.setattr(formats._CpuBudget, "over", spent_at_the_50th)
    monkeypatch.setattr(MarkdownConverter, "process_tag", counting)
    page = nested_html(250_000)
    with pytest.raises(NotADocument, match=r"^spent$"):
        html_to_markdown(page)
    assert len(checks) == 50
    assert len(converted_tags) < 50 < page.count(b"<span>")


def test_parent_lookups_answer_as_beautiful_soup_s_own() -> None:
    from bs4 import BeautifulSoup, Tag

    from prixfixe.knowledge.formats import _tag_class

    page = "<div><pre><b><i>x</i></b><p>y</p></pre><span><b>z</b></span></div><em>w</em>"
    fast = BeautifulSoup(page, "html.parser", element_classes={Tag: _tag_class()})
    slow = BeautifulSoup(page, "html.parser")
    pairs = list(zip(fast.find_all(True), slow.find_all(True), strict=True))
    for name in ("pre", "div", "b", "nowhere"):
        for _ in range(2):  # asked again: the remembered answers
            for mine, theirs in pairs:
                got, want = mine.find_parent(name), theirs.find_parent(name)
                assert (got and got.name, got and str(got)) == (
                    want and want.name,
                    want and str(want),
                )
    spans = fast.find_all("span")
    assert spans[0].find("b").find_parent("span", {"class": "none"}) is None  # the general path


@pytest.mark.parametrize(
    "page",
    [
        b"<p><b><i>unclosed <table><tr><td>cell</p></x></y>&#xZZ; <<<>>> <!-- never ends",
        b"</html></body><h1>after the end</h1>",
        b"<h1></h1><h2>   </h2>",
        b"",
        b"\xef\xbb\xbf<h1>with a BOM</h1>",
        b"<h1>\xff\xfe not utf-8 \x80</h1>",
    ],
)
def test_malformed_html_gives_best_effort_text_never_an_error(page: bytes) -> None:
    converted = html_to_markdown(page)
    assert isinstance(converted.text, str)


def test_html_too_large_or_binary_is_not_a_document() -> None:
    with pytest.raises(NotADocument, match=f"larger than {MAX_DOCUMENT_BYTES} bytes"):
        html_to_markdown(b"<p>" + b"a" * MAX_DOCUMENT_BYTES)
    with pytest.raises(NotADocument, match="binary"):
        html_to_markdown(b"<p>a\0b</p>")


def test_pdf_pages_become_sections_with_its_declared_title() -> None:
    converted = pdf_to_markdown(
        make_pdf(["Intro line", "# looks like a heading\n~~~ fence"], title="Annual report")
    )
    assert converted.title == "Annual report"
    chunks = split(converted.text, converted.chunking)
    assert [c.heading for c in chunks] == ["Page 1", "Page 2"]
    assert chunks[0].body == "## Page 1\n\nIntro line\n\n"
    # A page's own lines never open a heading or a code fence of their own.
    assert chunks[1].body == "## Page 2\n\n\\# looks like a heading\n\\~~~ fence\n"


def test_unreadable_pdfs_are_not_documents_and_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = make_pdf(["one", "two", "three"])
    with pytest.raises(NotADocument, match=r"an encrypted PDF \(it needs a password\)"):
        pdf_to_markdown(encrypt_pdf(pdf, "hunter2"))
    # Encrypted with an empty user password (permissions only): readable.
    assert "one" in pdf_to_markdown(encrypt_pdf(pdf, "")).text
    for corrupt in (b"", b"%PDF-1.4\ngarbage", pdf[: len(pdf) // 2]):
        with pytest.raises(NotADocument, match="a PDF that cannot be read"):
            pdf_to_markdown(corrupt)
    with pytest.raises(NotADocument, match="no text"):
        pdf_to_markdown(make_pdf(["", ""]))
    monkeypatch.setattr("prixfixe.knowledge.formats.MAX_PDF_PAGES", 2)
    with pytest.raises(NotADocument, match="a PDF of 3 pages; the limit is 2"):
        pdf_to_markdown(pdf)


def _count_page_extractions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from pypdf import PageObject

    extracted: list[int] = []
    original = PageObject.extract_text

    def counting(self: PageObject, *args: object, **kwargs: object) -> str:
        extracted.append(1)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PageObject, "extract_text", counting)
    return extracted


def test_a_pdf_over_the_size_limit_stops_at_the_page_that_crosses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 8 pages of 1,000 "laugh"s each, from a file of a few KB: the first page's text is over a
    # 2,000-byte limit, so the other seven are never extracted.
    pdf = make_nested_pdf(3, 10, pages=8)
    monkeypatch.setattr("prixfixe.knowledge.formats.MAX_DOCUMENT_BYTES", 2000)
    extracted = _count_page_extractions(monkeypatch)
    with pytest.raises(NotADocument, match="its text is larger than 2000 bytes"):
        pdf_to_markdown(pdf)
    assert len(extracted) == 1


def test_a_pdf_that_costs_more_cpu_than_its_size_allows_is_refused_while_extracting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each page draws 10,000 form invocations from a few KB (about 2 s of CPU a page here,
    # so the whole file took about 20 s before the budget): refused once the budget is spent.
    pdf = make_nested_pdf(2, 100, pages=8)
    monkeypatch.setattr("prixfixe.knowledge.formats.PDF_BASE_SECONDS", 0.2)
    extracted = _count_page_extractions(monkeypatch)
    with pytest.raises(NotADocument, match="costs more than 0 s of CPU to extract"):
        pdf_to_markdown(pdf)
    assert len(extracted) < 8
    # An ordinary PDF of the same page count is well inside it.
    assert pdf_to_markdown(make_pdf(["one page"] * 8)).text.count("## Page") == 8


def test_without_the_pdf_extra_a_pdf_is_skipped_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, add: Ingest, folder: Path
) -> None:
    (folder / "report.pdf").write_bytes(make_pdf(["text"]))
    monkeypatch.setitem(sys.modules, "pypdf", None)  # what an install without the extra sees
    result = add()
    assert Skipped("report.pdf", f"a PDF, and reading PDFs needs the pdf extra: {PDF_EXTRA}") in (
        result.skipped
    )
    assert PDF_EXTRA == "pip install 'prixfixe[pdf]'"


def test_a_folder_of_html_and_pdf_is_stored_as_markdown_with_titles(
    add: Ingest, kb: OwnerSlice, folder: Path
) -> None:
    (folder / "page.HTML").write_text(PAGE, encoding="utf-8")
    (folder / "untitled.htm").write_text("<title>Only a title</title><p>body</p>")
    (folder / "report.pdf").write_bytes(make_pdf(["Quarterly numbers"], title="Report"))
    (folder / "plain.pdf").write_bytes(make_pdf(["No metadata here"]))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 nothing else")
    result = add()
    assert {"page.HTML", "untitled.htm", "report.pdf", "plain.pdf"} <= set(result.added)
    assert [s.path for s in result.skipped] == ["broken.pdf"]
    docs = {d.path: d for d in catalog.documents(kb, "garden")}
    assert (docs["page.HTML"].format, docs["page.HTML"].title) == ("html", "Garden")
    assert docs["untitled.htm"].title == "Only a title"
    assert (docs["report.pdf"].format, docs["report.pdf"].title) == ("pdf", "Report")
    assert docs["plain.pdf"].title == "plain.pdf"
    text = catalog.document_text(kb, "garden", docs["page.HTML"].id)
    assert text is not None
    assert text.startswith("Home\n\n# Garden\n")
    assert docs["page.HTML"].bytes == len(text.encode())
    assert docs["report.pdf"].chunks == 1


def test_an_unchanged_html_file_is_not_parsed_again(
    add: Ingest, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    add()

    def parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr("bs4.BeautifulSoup", parse)
    again = add()
    assert "page.html" in again.unchanged
    assert again.generation is None
