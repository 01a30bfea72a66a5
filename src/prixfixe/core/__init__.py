"""The core: the registry of declarations, the plugin manager, facets, completion, and the one
way plugin code is called."""
