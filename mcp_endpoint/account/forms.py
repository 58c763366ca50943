"""The form a user fills in to make a personal API key."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from mcp_endpoint import compat
from mcp_endpoint.clients import ClientGuide
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.scopes import known_scopes

EXPIRY_DAYS = (7, 30, 90, 180, 365)


def grantable_scopes(request: HttpRequest) -> dict[str, str]:
    """The scopes this user may put on a key: those django-oauth-toolkit's scopes backend
    makes available to them, as on the consent page, with their descriptions; without the
    toolkit, :func:`mcp_endpoint.scopes.known_scopes`."""
    if not compat.toolkit_in_use():
        return known_scopes()
    from oauth2_provider.scopes import get_scopes_backend

    backend = get_scopes_backend()
    every = backend.get_all_scopes()
    available = backend.get_available_scopes(application=None, request=request)
    return {str(name): str(every.get(name, name)) for name in available}


def expiry_choices(default: int) -> list[tuple[int, str]]:
    days = sorted({*EXPIRY_DAYS, default})
    return [(d, ngettext("%(days)d day", "%(days)d days", d) % {"days": d}) for d in days]


class PersonalKeyForm(forms.Form):
    """Name, scopes, expiry, and the client whose configuration the new key is shown in."""

    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("Where you use it, so you recognise it later: “laptop”, “Cursor at work”."),
    )
    scopes = forms.MultipleChoiceField(
        label=_("Access"),
        widget=forms.CheckboxSelectMultiple,
        choices=[],
        error_messages={"required": _("Choose at least one kind of access for the key.")},
    )
    expires_in = forms.TypedChoiceField(label=_("Expires in"), coerce=int, choices=[])
    client = forms.ChoiceField(label=_("Show the configuration for"), choices=[])

    def __init__(
        self, *args: Any, request: HttpRequest, guides: list[ClientGuide], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        scopes = self.fields["scopes"]
        assert isinstance(scopes, forms.MultipleChoiceField)
        scopes.choices = [
            (name, f"{text} ({name})") for name, text in grantable_scopes(request).items()
        ]
        default = mcp_settings.API_KEY_DEFAULT_EXPIRY_DAYS
        expires_in = self.fields["expires_in"]
        assert isinstance(expires_in, forms.TypedChoiceField)
        expires_in.choices = expiry_choices(default)
        expires_in.initial = default
        client = self.fields["client"]
        assert isinstance(client, forms.ChoiceField)
        client.choices = [(g.slug, g.name) for g in guides if g.uses_key]
        client.initial = client.choices[0][0]

    def expires(self) -> Any:
        return timezone.now() + timedelta(days=self.cleaned_data["expires_in"])
