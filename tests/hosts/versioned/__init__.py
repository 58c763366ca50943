"""A host versioned by URL path (a path() converter) and by namespace."""
