"""Routines: config-defined sequences of steps, run by one engine into one report.

`spec` turns configuration (or an inline list) into runnable routines, `engine` runs them,
`report` is the report's data contract and its markdown, `archive` stores reports by the store
generation that produced them, and `contract` checks step data schemas against checked-in
golden files and consumers' pinned versions.
"""
