"""A document-management host, shaped like a large product nobody here wrote.

Its serializers answer with what a strict client trips over: a ``set`` of permission names,
``Decimal`` amounts, datetimes, UUIDs, fields dropped in ``to_representation`` unless a query
parameter asks for them (which its OpenAPI schema still marks required), and a
``SerializerMethodField`` without a type hint. Its documents filter by ``correspondent__id__in``
(django-filter's ``BaseInFilter``, comma-separated on REST); its notes are one ``@action``
with GET, POST and DELETE; a list-route action answers with one object; its own URL conf
ends in a catch-all page route, as single-page apps do.
"""
