"""Keep Python's full garbage collections short while people wait on the app.

The server process holds some 170,000 long-lived container objects once pandas, SciPy, Plotly
and OpenDP are imported (counted with ``gc.get_freeze_count()`` after the Compare page has run).
A full (generation 2) collection walks all of them: 120 ms measured here,
enough to make an ε slider move on Compare miss its 0.3 s floor when one falls inside the run.
Those objects live as long as the process, so after the first run they are moved out of the
collector's reach (``gc.freeze``). Reference counting still frees them if they are dropped; only
a reference cycle among them would stay, which modules and their tables do not form.

The collection Streamlit runs after every script (``runner.postScriptGC``) is switched off in
``.streamlit/config.toml`` for the same reason.
"""

import gc

_frozen = False


def freeze_objects_loaded_so_far() -> None:
    """On the process's first call only, exempt every object alive now from later collections."""
    global _frozen
    if not _frozen:
        gc.collect()  # garbage from start-up first, so that none of it is frozen
        gc.freeze()
        _frozen = True
