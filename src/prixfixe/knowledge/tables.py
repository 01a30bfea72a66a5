"""The knowledge base's own tables, declared as append-only named migrations.

Three tables and a full-text index: `collections` (a name), `documents` (keyed by collection
and the path relative to the folder it was read from, with the content hash that makes
re-ingest incremental) and `chunks` (a document's text split along its headings; the chunks of
a document, joined in `seq` order, are its text exactly). `chunks_fts` is an FTS5 index over
the chunks' heading and body, kept in step with `chunks` by triggers, so no writer can forget
it; deleting a document deletes its chunks (foreign keys cascade) and their index entries.
"""

from __future__ import annotations

from prixfixe.declarations.kinds import StoreMigration

MIGRATIONS = (
    StoreMigration(
        name="0001_knowledge",
        statements=(
            "CREATE TABLE {prefix}collections (id INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL UNIQUE, created_gen INTEGER NOT NULL)",
            "CREATE TABLE {prefix}documents (id INTEGER PRIMARY KEY, "
            "collection INTEGER NOT NULL REFERENCES {prefix}collections (id) ON DELETE CASCADE, "
            "path TEXT NOT NULL, root TEXT NOT NULL, title TEXT NOT NULL, "
            "format TEXT NOT NULL, hash TEXT NOT NULL, bytes INTEGER NOT NULL, "
            "gen INTEGER NOT NULL, UNIQUE (collection, path))",
            "CREATE TABLE {prefix}chunks (id INTEGER PRIMARY KEY, "
            "document INTEGER NOT NULL REFERENCES {prefix}documents (id) ON DELETE CASCADE, "
            "seq INTEGER NOT NULL, heading TEXT NOT NULL, body TEXT NOT NULL, "
            "UNIQUE (document, seq))",
            "CREATE VIRTUAL TABLE {prefix}chunks_fts USING fts5(heading, body, "
            "content='{prefix}chunks', content_rowid='id', tokenize='porter unicode61')",
            "CREATE TRIGGER {prefix}chunks_ai AFTER INSERT ON {prefix}chunks BEGIN "
            "INSERT INTO {prefix}chunks_fts (rowid, heading, body) "
            "VALUES (new.id, new.heading, new.body); END",
            "CREATE TRIGGER {prefix}chunks_ad AFTER DELETE ON {prefix}chunks BEGIN "
            "INSERT INTO {prefix}chunks_fts ({prefix}chunks_fts, rowid, heading, body) "
            "VALUES ('delete', old.id, old.heading, old.body); END",
            "CREATE TRIGGER {prefix}chunks_au AFTER UPDATE ON {prefix}chunks BEGIN "
            "INSERT INTO {prefix}chunks_fts ({prefix}chunks_fts, rowid, heading, body) "
            "VALUES ('delete', old.id, old.heading, old.body); "
            "INSERT INTO {prefix}chunks_fts (rowid, heading, body) "
            "VALUES (new.id, new.heading, new.body); END",
        ),
    ),
)
