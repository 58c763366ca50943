"""A host whose actions answer with files: a printable PDF and a picture (custom renderers),
a CSV export, a ``FileResponse`` download, and a stream of events (the tutorial's snippets)."""
