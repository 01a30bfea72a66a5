"""Built-in capabilities, each a plugin on the same hooks third-party plugins use."""
