"""A writer process for the durability tests: N single puts through the store's interface,
printing each id once its put has returned (committed). Run as a script: `writer.py HOME N`."""

from __future__ import annotations

import sys

from prixfixe.app import App


def main() -> None:
    home, count = sys.argv[1], int(sys.argv[2])
    app = App.build(env={"PRIXFIXE_HOME": home})
    store = app.store
    for i in range(count):
        written = store.put("reminder", {"text": f"note {i}", "due": "2026-12-01"})
        print(written.id, i, flush=True)
    app.close_store()


if __name__ == "__main__":
    main()
