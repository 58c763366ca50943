"""A host whose REST API takes DRF's own tokens only (``TokenAuthentication``)."""
