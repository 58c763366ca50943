"""Forms for API keys: scopes are chosen among the scopes the site knows
(:func:`mcp_endpoint.scopes.known_scopes`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcp_endpoint.models import AbstractAPIKey, get_api_key_model
from mcp_endpoint.scopes import known_scopes

__all__ = ["APIKeyForm", "known_scopes"]


if TYPE_CHECKING:
    ModelFormBase = forms.ModelForm[AbstractAPIKey]
else:
    ModelFormBase = forms.ModelForm  # not subscriptable at run time


class APIKeyForm(ModelFormBase):
    """The admin's form for an API key, with ``scope`` edited as a set of checkboxes.

    The secret is not a field: a new key's secret is made by ``create_key`` when the admin
    saves the form, and an existing key's prefix and digest are never editable.
    """

    scopes = forms.MultipleChoiceField(
        label=_("scopes"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("What the key may do, as an OAuth access token with these scopes."),
        error_messages={"required": _("Choose at least one scope for the key.")},
    )

    class Meta:
        model = get_api_key_model()
        fields = ["user", "name", "expires"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(name, f"{name}: {text}") for name, text in known_scopes().items()]
        current = sorted(self.instance.scopes) if self.instance.pk else []
        # A scope the settings no longer name stays visible on the key, instead of being
        # dropped silently the next time someone edits its name.
        choices += [
            (name, _("%(scope)s (not in SCOPES)") % {"scope": name})
            for name in current
            if name not in known_scopes()
        ]
        field = self.fields["scopes"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = choices
        if self.instance.pk:
            field.initial = current

    def clean(self) -> dict[str, Any]:
        super().clean()
        expires = self.cleaned_data.get("expires")
        if not self.instance.pk and expires is not None and expires <= timezone.now():
            self.add_error("expires", _("A new key cannot expire in the past."))
        scopes = self.cleaned_data.get("scopes")
        if scopes:
            # Not a model field of the form, so the model form leaves ``scope`` to us.
            self.instance.scope = " ".join(scopes)
        return self.cleaned_data
