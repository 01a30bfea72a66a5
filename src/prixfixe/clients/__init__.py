"""MCP clients connected to prixfixe: where each keeps its servers (`targets`), the entry that
starts or reaches prixfixe in each one's own shape (`entry`), and that entry merged into the
client's file without touching anything else in it (`merge`). `prixfixe client` is the CLI.

Reading those files (JSONC, bounded, errors that name the line) is shared with
`prixfixe servers import`: `prixfixe.servers.client_files`.
"""
