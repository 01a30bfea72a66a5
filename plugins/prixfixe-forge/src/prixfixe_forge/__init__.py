"""prixfixe-forge: the review-queue steps of a morning routine, as a prixfixe plugin.

Step types (none is a tool, so none changes `tools/list`):

- `github-pr-scan`: review requests for a GitHub user and the user's own open pull requests;
- `gitlab-mr-review`: open GitLab merge requests where the user is a reviewer;
- `gitlab-group-mrs`: a GitLab group's open merge requests;
- `mr-sla-check`: merge requests waiting longer than a configured number of hours;
- `url-watch`: a page's HTTP status and whether its content changed since the last run;
- `chores-check`: recurring chores from a board folder's `chores.toml`, due and overdue.

Every connection goes through the net gate (`StepContext.net`), every file through the file
gate (`StepContext.fs`); tokens come from the step's credential references (`secrets`) and are
only ever put in a request header.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prixfixe-forge")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"
