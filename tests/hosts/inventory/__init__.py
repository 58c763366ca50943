"""A network inventory: the shapes of a large, real DRF product.

- its own token model and authentication class (``Authorization: Token <key>``), tokens
  that may be read-only, used as the MCP endpoint's authentication as well;
- object permissions whose constraints restrict every queryset per user and action;
- ``AcceptHeaderVersioning`` as the default versioning class of every view;
- filtersets that generate a dozen lookups per field (``name__ic``, ``name__nisw``, ...);
- a create that takes one object or a list of them (a ``oneOf`` body);
- ``DecimalField`` coordinates with bounds, and a choice list of 600 time zones;
- a serializer that reads ``ContentType`` rows while its fields are built.
"""
