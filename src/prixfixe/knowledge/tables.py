"""The knowledge base's own tables, declared as append-only named migrations.

Three tables and a full-text index: `collections` (a name), `documents` (keyed by collection
and the path relative to the folder it was read from, with the content hash that makes
re-ingest incremental) and `chunks` (a document's text split along its headings; the chunks of
a document, joined in `seq` order, are its text exactly). `chunks_fts` is an FTS5 index over
the chunks' heading and body, kept in step with `chunks` in the transaction that changes them
(`0001` by triggers; since `0003`, inserts by the one write path that inserts chunks, deletes
and updates still by triggers); deleting a document deletes its chunks (foreign keys cascade)
and their index entries.

`0002_vectors` adds what hybrid search reads (see `vectors`): `vectors`, one embedding per
chunk (float16 bytes), deleted with its chunk; and `embedding_model`, one row naming the model
and width every stored vector was made with and when, with a count of the vectors and a
`version` that changes with every vector written or deleted (triggers keep both, cascades
included), so a reader knows without scanning whether its copy in memory is current.

`0003_index_written_by_ingest` drops the insert trigger: a trigger writes the index one chunk
at a time, and FTS5 flushes its pending terms to disk at every statement savepoint, so one
chunk cost ten times what the index itself costs. Chunks are inserted by one write path alone
(`ingest._Writes`), which ends every transaction that inserts chunks with one statement that
indexes them all: the chunks of the documents that transaction stamped with its generation
(hence the index on `documents (gen)`). Deletes and updates keep their triggers, so the index
still follows every chunk removed, by whatever path.
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
    StoreMigration(
        name="0002_vectors",
        statements=(
            "CREATE TABLE {prefix}embedding_model (id INTEGER PRIMARY KEY CHECK (id = 1), "
            "model TEXT NOT NULL, dims INTEGER NOT NULL, dtype TEXT NOT NULL, "
            "created_gen INTEGER NOT NULL, created_at TEXT NOT NULL, "
            "vectors INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0)",
            "CREATE TABLE {prefix}vectors (chunk INTEGER PRIMARY KEY "
            "REFERENCES {prefix}chunks (id) ON DELETE CASCADE, vector BLOB NOT NULL)",
            # random(), not a counter: two copies of one store file that diverge never reach
            # the same version with different vectors.
            "CREATE TRIGGER {prefix}vectors_ai AFTER INSERT ON {prefix}vectors BEGIN "
            "UPDATE {prefix}embedding_model SET vectors = vectors + 1, version = random(); END",
            "CREATE TRIGGER {prefix}vectors_ad AFTER DELETE ON {prefix}vectors BEGIN "
            "UPDATE {prefix}embedding_model SET vectors = vectors - 1, version = random(); END",
            "CREATE TRIGGER {prefix}vectors_au AFTER UPDATE ON {prefix}vectors BEGIN "
            "UPDATE {prefix}embedding_model SET version = random(); END",
        ),
    ),
    StoreMigration(
        name="0003_index_written_by_ingest",
        statements=(
            "DROP TRIGGER {prefix}chunks_ai",
            "CREATE INDEX {prefix}documents_gen ON {prefix}documents (gen)",
        ),
    ),
)
