"""A PostgreSQL ``DATABASE_URL`` as Django's ``DATABASES`` entry: the demo's settings and
the suite's own settings modules read it alike. Nothing else here, so that a settings
module may import it without the demo's apps."""

from __future__ import annotations

from urllib.parse import unquote, urlparse


def database_from_url(url: str, *, conn_max_age: int = 0) -> dict[str, object]:
    parts = urlparse(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"DATABASE_URL must be a postgres:// URL, not {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": conn_max_age,
    }
