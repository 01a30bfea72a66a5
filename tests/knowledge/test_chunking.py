"""Documents are split along their headings (markdown) or paragraphs (text), losslessly."""

from __future__ import annotations

from prixfixe.knowledge.chunking import TEXT_CHUNK_CHARS, Chunk, split, title_of
from tests.knowledge.conftest import GUIDE, NOTES


def test_markdown_splits_at_every_heading_but_not_inside_fenced_code() -> None:
    chunks = split(GUIDE, "markdown")
    assert [c.heading for c in chunks] == ["Garden guide", "Watering", "Pruning"]
    assert "# not a heading" in chunks[2].body
    assert "".join(c.body for c in chunks) == GUIDE


def test_text_before_the_first_heading_is_its_own_chunk_and_the_title_falls_back() -> None:
    chunks = split("preamble\n\n## Later\nbody\n", "markdown")
    assert chunks == [Chunk("", "preamble\n\n"), Chunk("Later", "## Later\nbody\n")]
    assert title_of(chunks, "file.md") == "Later"
    assert title_of(split("no headings\n", "markdown"), "file.md") == "file.md"


def test_plain_text_is_gathered_by_paragraphs_up_to_a_size() -> None:
    assert len(split(NOTES, "text")) == 1
    paragraph = "word " * (TEXT_CHUNK_CHARS // 12) + "\n"  # two fit in a chunk, three do not
    text = "\n".join([paragraph] * 4)
    chunks = split(text, "text")
    assert len(chunks) == 2
    assert "".join(c.body for c in chunks) == text
