"""The prompt service: `prompts/list`, `prompts/get` and completion of prompt arguments.

Declarations (`Prompt`, `PromptArgument`, `PromptMessage`) live in
`prixfixe.declarations.prompt`; this package serves them.
"""
