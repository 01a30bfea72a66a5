"""The knowledge base: collections of documents in the store, chunked along their headings,
searched with SQLite FTS5 (PostgreSQL's full-text search where the store is PostgreSQL: one
knowledge base for every instance on the database) and served as resources.

`tables` declares the store tables (a named migration, like any owner's), `chunking` splits a
document into chunks, `ingest` reads files through the leash's file gate into a collection,
`catalog` reads collections and documents back, `search` ranks chunks with BM25, and `plugin`
registers the migration and the resources as a default plugin. `backend` is where the tables
live (the seam between the two stores) and `pg` what PostgreSQL does otherwise.
"""

#: The plugin that owns the knowledge tables: the store keys the tables (and their migrations)
#: by this name, so it is a stored identity that stays the same wherever the module lives.
KNOWLEDGE_OWNER = "prixfixe.default_plugins.knowledge"
