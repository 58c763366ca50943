"""A host shaped like the DRF tutorial: snippets owned by users, hyperlinked serializers, an
object permission, an HTML action, a ``DefaultRouter``, and a user list that accepts
browser sessions only."""
