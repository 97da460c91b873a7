"""The ``strata-lab`` command line: the planner's answers for scripts and terminals.

A thin front end over :mod:`dpcore`, kept outside it so that ``dpcore`` stays free of front-end
code: it parses arguments, calls the library and prints what the library computed (JSON or a
short table). Entry point: :func:`strata_cli.main.main`.
"""
