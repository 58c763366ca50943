"""The French catalogue the app ships: every string the app marks for translation has its
French, and the compiled catalogue (what Django reads) says what the .po file says.

The pages in French are tested with the pages themselves (the call log's in
test_tool_calls.py, the task admin's in test_admin.py).
"""

from __future__ import annotations

import ast
import gettext
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

import mcp_endpoint

APP = Path(mcp_endpoint.__file__).parent
FRENCH = APP / "locale" / "fr" / "LC_MESSAGES"


@dataclass
class Entry:
    msgid: str
    plural: str | None
    translations: list[str]
    fuzzy: bool


def entries(po: Path) -> list[Entry]:
    """The entries of a .po file, the header left out."""
    found: list[Entry] = []
    for block in po.read_text(encoding="utf-8").split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        fuzzy = False
        for line in block.splitlines():
            if line.startswith("#,"):
                fuzzy = fuzzy or "fuzzy" in line
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                fields[key] += ast.literal_eval(line)  # a continued (wrapped) string
            elif line:
                key, _, literal = line.partition(" ")
                fields[key] = ast.literal_eval(literal)
        if fields.get("msgid"):
            found.append(
                Entry(
                    msgid=fields["msgid"],
                    plural=fields.get("msgid_plural"),
                    translations=[v for k, v in fields.items() if k.startswith("msgstr")],
                    fuzzy=fuzzy,
                )
            )
    return found


def test_the_compiled_catalogue_is_the_po_file() -> None:
    with (FRENCH / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    shipped = entries(FRENCH / "django.po")
    assert shipped
    for entry in shipped:
        assert not entry.fuzzy and all(entry.translations), entry
        if entry.plural is None:
            assert compiled.gettext(entry.msgid) == entry.translations[0]
        else:
            # French: the singular for 0 and 1, the plural from 2.
            singular, plural = entry.translations
            assert compiled.ngettext(entry.msgid, entry.plural, 1) == singular
            assert compiled.ngettext(entry.msgid, entry.plural, 2) == plural


@pytest.mark.once
@pytest.mark.skipif(shutil.which("xgettext") is None, reason="GNU gettext is not installed")
def test_every_string_of_the_app_has_its_french(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # makemessages on a copy, so that the shipped catalogue is only read: what it adds to
    # the copy's .po is what the app marks for translation and the catalogue lacks.
    copy = tmp_path / "mcp_endpoint"
    shutil.copytree(APP, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(copy)
    call_command("makemessages", locale=["fr"], no_location=True, verbosity=0)
    missing = [
        e.msgid
        for e in entries(copy / "locale" / "fr" / "LC_MESSAGES" / "django.po")
        if e.fuzzy or not all(e.translations)
    ]
    assert missing == []
