"""How the app is served, decided once per server: for one person on this machine, for a team
signed in through OpenID Connect, or refused.

*Single-user* mode is a server bound to 127.0.0.1 (``make run``) with neither a team file
(:data:`~strata_ui.team_config.CONFIG_ENV`) nor an ``[auth]`` section in Streamlit's secrets:
whoever reaches it is on this machine and acts as curator. Any other address, Streamlit's
default of every address included, serves others: the app then needs sign-in (``[auth]``), a
team file and a data root, and refuses to run without them. A team file or ``[auth]`` on
127.0.0.1 asks for the same (a team trying its set-up locally).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import streamlit as st

from strata_ui import team_config
from strata_ui.team_config import TeamConfig, TeamConfigError

__all__ = ["LOCAL_ADDRESSES", "ServingMode", "data_root_of_team", "mode"]

LOCAL_ADDRESSES = frozenset({"127.0.0.1", "localhost", "::1"})
"""Addresses no one else reaches. 127.0.0.2 and the like are loopback too, but only these are
what ``make run`` uses; anything else counts as served (safe by default)."""
DATA_ROOT_ENV = "STRATA_LAB_DATA_ROOT"  # also read by strata_ui.files
_HOW = (
    "To serve Strata Lab to a team: put an [auth] section for your OpenID Connect provider in "
    ".streamlit/secrets.toml, write a team file naming each person's role and the data root, "
    f"and point {team_config.CONFIG_ENV} at it (README, “Serving Strata Lab to a team”). For "
    "one person on this machine only: `make run` (it serves on 127.0.0.1 with no set-up)."
)


@dataclass(frozen=True)
class ServingMode:
    """``kind`` is ``single`` (one person on this machine), ``team`` (sign-in and roles) or
    ``refused`` (``problem`` says why and how to fix it)."""

    kind: Literal["single", "team", "refused"]
    config: TeamConfig | None = None
    problem: str = ""


def mode() -> ServingMode:
    """This server's :class:`ServingMode`, from Streamlit's ``server.address``, the team file
    and the ``[auth]`` secrets (read once per team file and its modification time)."""
    address = st.get_option("server.address")
    path = team_config.config_path()
    stamp = path.stat().st_mtime_ns if path is not None and path.exists() else None
    return _mode(address or "", path, stamp, _auth_missing())


@functools.lru_cache(maxsize=8)
def _mode(
    address: str, path: Path | None, _stamp: int | None, auth_missing: tuple[str, ...] | None
) -> ServingMode:
    served = address not in LOCAL_ADDRESSES
    if not served and path is None and auth_missing is None:
        return ServingMode("single")
    where = f"on {address}" if address else "on every address of this machine"
    if path is None:
        reason = f"Strata Lab is served {where} but has no team file ({team_config.CONFIG_ENV})."
        if not served:
            reason = "Sign-in is configured ([auth] in secrets.toml) but there is no team file."
        return ServingMode("refused", problem=f"{reason} {_HOW}")
    try:
        config = team_config.load(path)
    except TeamConfigError as exc:
        return ServingMode("refused", problem=f"The team file cannot be used: {exc}")
    if auth_missing is None:
        return ServingMode(
            "refused", config,
            f"The team file {path} is set, but sign-in is not: .streamlit/secrets.toml has no "
            f"[auth] section, so no one could be told apart. {_HOW}",
        )  # fmt: skip
    if auth_missing:
        return ServingMode(
            "refused", config,
            "The [auth] section of .streamlit/secrets.toml lacks "
            + ", ".join(f"`{key}`" for key in auth_missing)
            + ": add them (your OpenID Connect provider gives the client's id, secret and "
            "metadata URL; redirect_uri is this app's address followed by /oauth2callback).",
        )  # fmt: skip
    if data_root_of_team(config) is None:
        return ServingMode(
            "refused", config,
            f"Strata Lab is served {where} without a data root that exists: anyone could open "
            f"any file of the server by its path. Set `data_root` in {path} (or {DATA_ROOT_ENV}) "
            "to the folder that holds the data.",
        )  # fmt: skip
    return ServingMode("team", config)


def data_root_of_team(config: TeamConfig) -> Path | None:
    """The data root a team's app opens files under: the environment's, else the team file's
    (None when neither names an existing folder)."""
    text = os.environ.get(DATA_ROOT_ENV, "").strip()
    if text:
        root = Path(text).expanduser().resolve()
        return root if root.is_dir() else None
    return config.data_root


_AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
"""What ``st.login()`` needs in ``[auth]`` (one provider, the default)."""


def _auth_missing() -> tuple[str, ...] | None:
    """The keys :data:`_AUTH_KEYS` that Streamlit's ``[auth]`` secrets lack (empty: sign-in is
    configured), or None when there is no ``[auth]`` section."""
    try:
        if "auth" not in st.secrets:
            return None
        section = st.secrets["auth"]
    except Exception:  # no secrets.toml at all, or one Streamlit cannot parse: no sign-in
        return None
    return tuple(key for key in _AUTH_KEYS if not section.get(key))
