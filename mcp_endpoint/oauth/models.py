"""What the authorisation server must remember after django-oauth-toolkit forgets it.

The toolkit deletes an authorisation code's grant when the code is redeemed, so a second
use of the code finds nothing and cannot tell which tokens the first use issued. RFC 6749
§4.1.2 asks that those tokens be revoked when a code comes back (whoever replays it has
the code, so the first redemption may have been theirs). This model keeps, per redeemed
code, what to revoke. It names the toolkit's rows by value (client id, token checksum,
refresh-token family) rather than by foreign key, so this app's migrations do not depend
on the toolkit's, and a host without django-oauth-toolkit still migrates.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


def code_digest(code: str) -> str:
    """The stored form of an authorisation code: its SHA-256, never the code itself."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


class RedeemedAuthorizationCode(models.Model):
    """An authorisation code that was exchanged for tokens, and the tokens it gave."""

    code_digest = models.CharField(_("code digest"), max_length=64, unique=True)
    client_id = models.CharField(_("client id"), max_length=255)
    access_token_checksum = models.CharField(_("access token checksum"), max_length=64)
    token_family = models.UUIDField(_("refresh token family"), null=True, blank=True)
    created = models.DateTimeField(_("redeemed"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("redeemed authorisation code")
        verbose_name_plural = _("redeemed authorisation codes")

    def __str__(self) -> str:
        return f"Code redeemed by {self.client_id} at {self.created:%Y-%m-%d %H:%M}"


class MachineClient(models.Model):
    """An OAuth application that gets tokens with the client-credentials grant, and the
    Django user (a service account) its tokens act as.

    The application is named by its client id rather than by foreign key, so that this
    app's migrations do not depend on the toolkit's (see the module's docstring).
    """

    client_id = models.CharField(_("client id"), max_length=100, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="mcp_machine_clients",
        verbose_name=_("acts as"),
        help_text=_("The user whose permissions and data the application's tokens have."),
    )
    scopes = models.CharField(
        _("scopes"),
        max_length=255,
        blank=True,
        help_text=_(
            "The scopes it may ask for, separated by spaces; empty for any the server offers."
        ),
    )
    created = models.DateTimeField(_("created"), auto_now_add=True)
    revoked = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        verbose_name = _("machine client")
        verbose_name_plural = _("machine clients")

    def __str__(self) -> str:
        return f"{self.client_id} as {self.user}"

    def allows(self, scopes: list[str]) -> bool:
        """Whether it may ask for ``scopes``."""
        allowed = set(self.scopes.split())
        return not allowed or set(scopes) <= allowed
