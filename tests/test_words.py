"""The word normalisation ark.words gives the tools (content_words, lemma_key):
the tools compare a query with relation phrases by these, so they must say what the
linker's own reading of a question says."""

from ark.words import STOPWORDS, content_words, lemma_key, tokens


def test_content_words_drop_the_stopwords_of_the_tokens():
    words = content_words("Who directed the film_Alien?")
    assert words == [w for w in tokens("Who directed the film_Alien?") if w not in STOPWORDS]
    assert words == ["directed", "film", "alien"]


def test_a_phrase_of_stopwords_only_keeps_them_all():
    # "is the" names no content word; an empty phrase would match nothing at all.
    assert content_words("is the") == ["is", "the"]


def test_lemma_key_is_one_form_for_a_word_and_its_inflections():
    assert lemma_key("plays") == lemma_key("play") == lemma_key("played")
    assert lemma_key("children") == lemma_key("child")
    assert lemma_key("director") != lemma_key("direct")  # a derivation is another word


def test_an_apostrophe_splits_words_as_a_space_does():
    # A possessive reads the same written "Kalama's" or "Kalama 's": no rule for 's.
    assert tokens("Kalama's husband") == tokens("Kalama 's husband") == ["kalama", "s", "husband"]
    assert tokens("d’Algérie") == ["d", "algérie"]
