"""The built-in step types: git, calendar, board and program steps."""
