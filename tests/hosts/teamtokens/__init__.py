"""A product whose team tokens authenticate as ``AnonymousUser``: the token is the caller.

Its authentication class answers ``(AnonymousUser(), token)`` for a valid
``Authorization: Team <key>``; its permission class reads ``request.auth`` (the token's
team and whether it may write), and its querysets filter by the token's team.
"""
