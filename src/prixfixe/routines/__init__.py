"""Routines: config-defined sequences of steps, run by one engine into one report.

`spec` turns configuration (or an inline list) into runnable routines, `engine` runs them,
`report` is the report's data contract and its markdown, `archive` stores reports by the store
generation that produced them, and `contract` checks step data schemas against checked-in
golden files and consumers' pinned versions.
"""

#: The plugin that owns the reports table: the store keys the table (and its migrations) by
#: this name, so it is a stored identity that stays the same wherever the module lives.
REPORTS_OWNER = "prixfixe.default_plugins.routines"
