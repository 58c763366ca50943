"""A host whose lists page by limit and offset, and by cursor (the tutorial's snippets)."""
