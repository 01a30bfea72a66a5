"""Tools: argument validation, result shaping, search and the discovery trio."""
