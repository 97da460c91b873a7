"""The app's words in a message, said as the command line says them.

``dpcore`` writes its messages for the app, where a user fixes a choice "on the Budget page"; the
command line has no pages, and sending someone there from a terminal is a dead end. Every
message the command line prints (errors, notes, and the text of a result) goes through
:func:`in_cli_words`, which names the options that make the same choice instead. A sentence
that means the app itself ("the app's Budget page", where ledgers are started) keeps its words.
"""

from __future__ import annotations

import re

__all__ = ["in_cli_words"]

PAGE_OPTIONS = {
    "Data": "the data options (DATA, --value, --person)",
    "Strata": "the grouping options (--by, --edges, --min-group-size, --small-groups, --codebook)",
    "Estimator": "the analysis' options (--estimator, --bounds and the others in --help)",
    "Budget": "the budget options (--epsilon or --rho)",
    "Plan": "the plan command",
    "Compare": "the frontier command",
    "Release": "the release command",
}
_PAGE = "|".join(PAGE_OPTIONS)
# "(Budget page)", "on the Budget page", "the Budget page's", "the Budget page"; never "the
# app's Budget page".
_IN_BRACKETS = re.compile(rf"\((?:the )?({_PAGE}) page\)")
_WITH_PREPOSITION = re.compile(rf"\b(?:on|in|from|of) the ({_PAGE}) page\b(?:'s|’s)?")
_BARE = re.compile(rf"(?<!app's )(?<!app’s )\b[Tt]he ({_PAGE}) page\b(?:'s|’s)?")


def in_cli_words(message: str) -> str:
    """``message`` with each app page it names replaced by the options that make that choice on
    the command line."""
    message = _IN_BRACKETS.sub(lambda m: f"({PAGE_OPTIONS[m[1]]})", message)
    message = _WITH_PREPOSITION.sub(lambda m: f"with {PAGE_OPTIONS[m[1]]}", message)
    return _BARE.sub(lambda m: _as_at(m[0], PAGE_OPTIONS[m[1]]), message)


def _as_at(found: str, words: str) -> str:
    """``words`` capitalised where ``found`` began a sentence ("The Budget page sets ρ")."""
    return words[:1].upper() + words[1:] if found[:1].isupper() else words
