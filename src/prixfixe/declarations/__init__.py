"""What a plugin declares: tools, resources, prompts, step types, store kinds, content and
the hooks it implements. Every module here sits low and imports little, so a plugin does too."""
