"""Programs: a short Python program the model writes, run in a sandbox (pydantic-monty) whose
only door to the world is calling prixfixe's tools, each call through the same dispatch a
direct call takes (`App.call_tool` with the outer call's request). See docs/programs.md.

CONTRACT: nothing here imports pydantic-monty at import time; the sandbox is an optional
extra (`pip install 'prixfixe[programs]'`), and without it the rest of prixfixe works and
`program_run` says why it cannot run.
"""
