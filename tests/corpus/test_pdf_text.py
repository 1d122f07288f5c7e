"""A PDF's quotes read as its sentences (issue 44, item 10c), on the real GeoTopo lecture notes: a heading line
is never glued to the sentence after it, TeX's big operators are kept (⋃, not "["), and a list's "2)" marker
is not quoted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.answer.sentences import note_sentences, without_marker
from footnote.answer.types import Note
from footnote.corpus.chunkers import chunk_document
from footnote.corpus.loaders import load_path
from footnote.records.fragments import Document, FileLocator, Fragment
from footnote.settings import Settings
from footnote.text import split_sentences

S = Settings()


@pytest.fixture(scope="module")
def geotopo(shared_dir: Path) -> Iterator[Document]:
    (doc,) = load_path(shared_dir / "data/pdf/GeoTopo-komprimiert.pdf", settings=S)
    yield doc


def _page(doc: Document, page: int) -> str:
    return next(b.text for b in doc.blocks if b.page == page)


def _quotes(frags: list[Fragment], page: int) -> list[str]:
    return [s for f in frags if isinstance(f.locator, FileLocator) and f.locator.page == page
            for s in note_sentences(Note(1, f, 1.0), None, 80)]


def test_headings_are_not_glued_to_the_next_sentence(geotopo: Document) -> None:
    sents = split_sentences(_page(geotopo, 6))
    assert sents[:3] == ["1 Topologische Grundbegriffe", "1.1 Topologische Räume", "Definition 1"], sents[:4]
    assert sents[3].startswith("Ein topologischer Raum ist ein Paar (X, T)"), sents[3]
    assert "Beispiel 1 (Topologien)" in sents
    # the fragments the answer quotes from: no sentence starts with a heading
    quotes = _quotes(chunk_document(geotopo, S), 6)
    assert any(q.startswith("Ein topologischer Raum ist ein Paar") for q in quotes), quotes
    assert not any(q.startswith(("1 Topologische", "Definition 1 Ein")) and len(q.split()) > 4 for q in quotes)
    sents7 = split_sentences(_page(geotopo, 7))
    assert "Definition 3" in sents7 and any(s.startswith("Sei (X, T) ein topologischer Raum und M ⊆ X") for s in sents7)


def test_big_operators_are_kept(geotopo: Document) -> None:
    six = " ".join(_page(geotopo, 6).split())
    assert "so ist ⋃ i∈I Ui ∈ T" in six  # the union of the U_i (TeX's cmex glyph, stored as "[")
    assert "so ist [ i∈I" not in six
    seven = " ".join(_page(geotopo, 7).split())
    assert "= ⋃ U⊆M U∈T U heißt Inneres oder offener Kern von M." in seven
    assert "M := ⋂" in seven  # the intersection (stored as "\")
    nine = " ".join(_page(geotopo, 9).split())
    assert "TX := { U ⊆ X" in nine  # a big brace (stored as a control character)
    forty_one = " ".join(_page(geotopo, 41).split())
    assert "χ(∆n ) = ∑n k=0(−1)k ( n+1 k+1)" in forty_one  # a sum ("P") and a binomial's big parentheses (NUL, \x01)
    cmex_controls = {"\x00", "\x01", "\x08", "\t", "\x0c", "\x12", "\x13", "\x1a", "\x1b", "\x1c", "\x1d"}
    for b in geotopo.blocks:  # no big delimiter is left as a control character
        assert not cmex_controls & set(b.text), b.page


def test_a_list_marker_is_not_quoted(geotopo: Document) -> None:
    quotes = _quotes(chunk_document(geotopo, S), 6)
    assert "Jeder metrische Raum (X, d) ist auch ein topologischer Raum." in quotes
    assert not any(q.startswith(("2)", "3)", "(i)", "a)")) for q in quotes), quotes
    assert "Für eine Menge X heißt TDiskret = P(X) diskrete Topologie." in quotes


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        ("2) Jeder metrische Raum ist auch ein topologischer Raum.", "Jeder metrische Raum ist auch ein topologischer Raum."),
        ("(iii) Ist I eine Menge, so ist U offen.", "Ist I eine Menge, so ist U offen."),
        ("(a) Beweisen Sie, dass (X, TX) ein topologischer Raum ist.", "Beweisen Sie, dass (X, TX) ein topologischer Raum ist."),
        ("• Es gibt keine disjunkten offenen Mengen.", "Es gibt keine disjunkten offenen Mengen."),
        ("(X, d) ist ein metrischer Raum.", "(X, d) ist ein metrischer Raum."),
        ("f(x) = 0 gilt überall.", "f(x) = 0 gilt überall."),
        ("2)", "2)"),
    ],
)
def test_without_marker(sentence: str, quoted: str) -> None:
    assert without_marker(sentence) == quoted
