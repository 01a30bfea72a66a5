"""The fast English stemmer gives snowballstemmer's own stems, word for word."""

from __future__ import annotations

import snowballstemmer
from hypothesis import given
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer

from prixfixe.search.stemming import FastEnglishStemmer, english_stemmer

REFERENCE = EnglishStemmer()

#: Words that exercise each step of the algorithm: plurals, -ed/-ing and their exceptions,
#: -y, derivational suffixes (steps 2 to 4), the final -e/-ll step, the prefixes that mark
#: their own region, the whole-word exceptions, and a leading apostrophe.
WORDS_TEXT = """
    caresses ponies ties cats gaps kiwis gas this bus success feed agreed plastered bled
    motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing
    filing happy sky cry by say boy relational conditional rational valenci hesitanci
    digitizer conformabli radicalli differentli vileli analogousli vietnamization
    predication operator feudalism decisiveness hopefulness callousness formaliti
    sensitiviti sensibiliti triplicate formative formalize electriciti electrical hopeful
    goodness revival allowance inference airliner gyroscopic adjustable defensible
    irritant replacement adjustment dependent adoption homologou communism activate
    angulariti homologous effective bowdlerize probate rate cease controll roll generate
    generously communication arsenal universal universe emergency organization pasture
    later skis skies dying lying tying idly gently ugly early only singly news howe atlas
    cosmos bias andes inning outing canning herring earring proceed exceed succeed
    'tis yesterday's consign consigned consigning consignment consist consisted
    consistency knack knackeries knight knightly knit knock knocked biology biologist
    ecology geologist zoologist analogy apology fly flies flying flyer sly slyly
    """
WORDS = WORDS_TEXT.split()
SUFFIXES_TEXT = (
    "ing ed ies ied s ss us sses eed eedly ingly edly ly li ational tional enci anci abli "
    "izer ization ation ator alism aliti alli fulness ousli ousness iveness iviti biliti "
    "bli ogi ogist fulli lessli icate ative alize iciti ical ful ness al ance ence er ic "
    "able ible ant ement ment ent ism ate iti ous ive ize ion e ll"
)


def test_the_fast_stemmer_gives_snowballs_stem_for_every_step_of_the_algorithm() -> None:
    fast = FastEnglishStemmer()
    assert [fast.stemWord(w) for w in WORDS] == [REFERENCE.stemWord(w) for w in WORDS]


@given(st.text(alphabet=st.sampled_from(list("aeiouybcdlmnrstgpzkw'")), max_size=16))
def test_the_fast_stemmer_agrees_with_snowball_on_any_lowercase_word(word: str) -> None:
    assert FastEnglishStemmer().stemWord(word) == REFERENCE.stemWord(word)


@given(
    st.text(alphabet=st.sampled_from(list("aeiouybcdlmnrst")), min_size=1, max_size=8),
    st.sampled_from(SUFFIXES_TEXT.split()),
)
def test_the_fast_stemmer_agrees_with_snowball_on_every_suffix_it_removes(
    stem: str, suffix: str
) -> None:
    assert FastEnglishStemmer().stemWord(stem + suffix) == REFERENCE.stemWord(stem + suffix)


def test_the_stemmer_in_use_is_the_c_one_where_installed_else_the_fast_one() -> None:
    stemmer = english_stemmer()
    if type(snowballstemmer.stemmer("english")) is EnglishStemmer:
        assert isinstance(stemmer, FastEnglishStemmer)
    assert stemmer.stemWord("reminders") == "remind"
