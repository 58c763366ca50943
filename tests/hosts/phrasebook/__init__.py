"""A phrasebook: a small product whose phrases choose from 600 languages and 50 styles.

Nine tools: a model viewset of phrases (six), a detail action that reads one phrase
aloud in another style, and a read-only viewset of authors (two). The size of its
``tools/list`` is about the choice lists, copied into every schema unless made compact.
"""
