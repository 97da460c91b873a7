"""The team file: who may do what when Strata Lab is served to others, where their data lies
and which Spark masters the app may connect to.

A TOML file named by the environment variable :data:`CONFIG_ENV`::

    data_root = "/srv/strata/data"         # the only folder files are opened from
    spark_masters = ["local[2]", "spark://spark.internal:7077"]
    sign_in_hours = 12                     # a sign-in older than this asks to sign in again

    [people]                               # identity = role
    "ana@example.org" = "curator"
    "raj@example.org" = "analyst"
    "google-oauth2|1180" = "viewer"        # an OpenID Connect subject (sub) works too

Identities are e-mail addresses (compared without regard to case) or subjects, as the
provider's ID token gives them (``email``, ``sub``). Pure Python: read once when the app starts,
and every mistake is a :class:`TeamConfigError` naming the file, the line and the fix.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CONFIG_ENV",
    "ROLES",
    "TeamConfig",
    "TeamConfigError",
    "config_path",
    "load",
    "normal_identity",
]

CONFIG_ENV = "STRATA_LAB_CONFIG"
"""The environment variable that names the team file."""
ROLES = ("curator", "analyst", "viewer")
DEFAULT_SIGN_IN_HOURS = 12.0
_KEYS = ("data_root", "spark_masters", "sign_in_hours", "people")
_EXAMPLE = '[people]\n"ana@example.org" = "curator"'


class TeamConfigError(ValueError):
    """A team file the app cannot start with: what is wrong, where, and how to fix it."""

    def __init__(self, path: Path, line: int | None, problem: str, fix: str) -> None:
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem} {fix}")
        self.path, self.line = path, line


@dataclass(frozen=True)
class TeamConfig:
    """The team file, read and checked.

    Attributes
    ----------
    path
        The file it was read from.
    people
        Each identity's role; e-mail addresses lower-cased (:func:`normal_identity`).
    data_root
        The only folder the app opens files from (None: the file sets none; the environment
        variable ``STRATA_LAB_DATA_ROOT`` may).
    spark_masters
        The only Spark masters the app connects to.
    sign_in_hours
        How long a sign-in lasts before the app asks to sign in again.
    """

    path: Path
    people: Mapping[str, str] = field(default_factory=dict)
    data_root: Path | None = None
    spark_masters: tuple[str, ...] = ()
    sign_in_hours: float = DEFAULT_SIGN_IN_HOURS

    def role_of(self, *identities: str | None) -> tuple[str, str] | None:
        """The first of ``identities`` (an e-mail, then a subject) named in the file, with its
        role; None when none is."""
        for identity in identities:
            if identity and (key := normal_identity(identity)) in self.people:
                return key, self.people[key]
        return None


def normal_identity(identity: str) -> str:
    """E-mail addresses compare without regard to case; subjects exactly as given."""
    identity = identity.strip()
    return identity.lower() if "@" in identity else identity


def config_path() -> Path | None:
    """The team file :data:`CONFIG_ENV` names, or None when it is unset."""
    text = os.environ.get(CONFIG_ENV, "").strip()
    return Path(text).expanduser().absolute() if text else None


def load(path: Path) -> TeamConfig:
    """Read and check the team file at ``path``.

    Raises
    ------
    TeamConfigError
        The file is missing or not TOML, or holds an unknown setting, an unknown role, an
        identity named twice, a data root that is not a folder, or a malformed value.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise TeamConfigError(
            path, None, f"cannot be read ({exc.__class__.__name__}: {exc}).",
            f"Check the path in {CONFIG_ENV}, or unset it to run on 127.0.0.1 for one person.",
        ) from None  # fmt: skip
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(path, exc) from None
    lines = text.splitlines()
    for key in table:
        if key not in _KEYS:
            raise TeamConfigError(
                path, _line_of(lines, key), f"unknown setting `{key}`.",
                f"The settings are {', '.join(f'`{k}`' for k in _KEYS)}; remove or rename it.",
            )  # fmt: skip
    return TeamConfig(
        path=path,
        people=_people(path, lines, table.get("people", {})),
        data_root=_data_root(path, lines, table.get("data_root")),
        spark_masters=_masters(path, lines, table.get("spark_masters", [])),
        sign_in_hours=_hours(path, lines, table.get("sign_in_hours", DEFAULT_SIGN_IN_HOURS)),
    )


def _toml_error(path: Path, exc: tomllib.TOMLDecodeError) -> TeamConfigError:
    found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
    line = int(found.group(1)) if found else None
    problem = re.sub(r"\s*\(at line .*\)$", "", str(exc))
    if problem.startswith("Cannot overwrite a value"):
        return TeamConfigError(
            path, line, "names an identity (or a setting) a second time.",
            "Give each person one line with one role; delete the other line.",
        )  # fmt: skip
    return TeamConfigError(
        path, line, f"is not valid TOML ({problem}).",
        'Write one `key = value` per line, text in double quotes: "ana@example.org" = "curator".',
    )  # fmt: skip


def _people(path: Path, lines: list[str], people: object) -> dict[str, str]:
    if not isinstance(people, dict) or not people:
        raise TeamConfigError(
            path, _line_of(lines, "[people]"), "names no one: the app would let no one in.",
            f"Add a [people] table with one line per person and role, e.g.\n{_EXAMPLE}",
        )  # fmt: skip
    roles: dict[str, str] = {}
    first_line: dict[str, int | None] = {}
    for identity, role in people.items():
        line = _line_of(lines, identity)
        if role not in ROLES:
            raise TeamConfigError(
                path, line, f"gives {identity!r} the role {role!r}, which is not a role.",
                f"Use one of {', '.join(repr(r) for r in ROLES)}.",
            )  # fmt: skip
        key = normal_identity(identity)
        if not key:
            raise TeamConfigError(path, line, "names an empty identity.",
                                  "Give an e-mail address or a subject (sub).")  # fmt: skip
        if key in roles:
            raise TeamConfigError(
                path, line,
                f"names {identity!r}, already named on line {first_line[key]} (e-mail addresses "
                "are the same whatever their case).",
                "Give each person one line with one role; delete one of the two.",
            )  # fmt: skip
        roles[key], first_line[key] = role, line
    return roles


def _data_root(path: Path, lines: list[str], root: object) -> Path | None:
    if root is None:
        return None
    line = _line_of(lines, "data_root")
    if not isinstance(root, str) or not root.strip():
        raise TeamConfigError(path, line, "`data_root` must be the path of a folder, in quotes.",
                              'Write e.g. data_root = "/srv/strata/data".')  # fmt: skip
    folder = (path.parent / Path(root).expanduser()).resolve()
    if not folder.is_dir():
        raise TeamConfigError(
            path, line, f"`data_root` is {root!r}, which is not a folder on this machine.",
            "Create the folder and put the data in it, or give the folder where the data lies.",
        )  # fmt: skip
    return folder


def _masters(path: Path, lines: list[str], masters: object) -> tuple[str, ...]:
    valid = isinstance(masters, list) and all(isinstance(m, str) and m.strip() for m in masters)
    if not valid:
        raise TeamConfigError(
            path, _line_of(lines, "spark_masters"),
            "`spark_masters` must be a list of Spark master URLs in quotes.",
            'Write e.g. spark_masters = ["local[2]", "spark://spark.internal:7077"].',
        )  # fmt: skip
    return tuple(master.strip() for master in masters)


def _hours(path: Path, lines: list[str], hours: object) -> float:
    number = isinstance(hours, int | float) and not isinstance(hours, bool)
    if not number or not math.isfinite(hours) or hours <= 0:
        raise TeamConfigError(
            path, _line_of(lines, "sign_in_hours"),
            f"`sign_in_hours` must be a number of hours above 0, got {hours!r}.",
            "Write e.g. sign_in_hours = 12.",
        )  # fmt: skip
    return float(hours)


def _line_of(lines: list[str], key: str) -> int | None:
    """The first line that sets ``key`` (bare or quoted), or that is ``key`` (a table header)."""
    pattern = re.compile(rf"^\s*(?:{re.escape(key)}|[\"']{re.escape(key)}[\"'])\s*(=|$)")
    return next((i for i, line in enumerate(lines, 1) if pattern.match(line)), None)
