"""A setting whose text form its type cannot give declares how it is read (``realrecall.settings.Text``):
from a command line's text, a config file's value or a value already in its form, one reader for all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest

from realrecall.errors import SettingError
from realrecall.settings import Settings, Text, setting_fields, settings_from


def read_pair(value: object) -> object:
    if isinstance(value, tuple):
        return value
    if isinstance(value, str) and value.count("/") == 1:
        left, right = value.split("/")
        return (int(left), int(right))
    raise SettingError("pair", f"must be written a/b, got {value!r}")


def read_names(value: object) -> object:
    return (value,) if isinstance(value, str) else tuple(value)  # type: ignore[arg-type]


def read_mode(value: object) -> object:
    if isinstance(value, bool):
        return "loud" if value else "silent"
    return value


@dataclass(frozen=True, kw_only=True)
class Example(Settings):
    pair: Annotated[tuple[int, ...] | None, "A pair.", Text(read_pair, "A/B")] = None
    names: Annotated[tuple[str, ...], "Names.", Text(read_names, form="repeated")] = ()
    mode: Annotated[str, "How.", Text(read_mode, form="switch")] = "normal"


def test_a_text_field_is_read_by_its_reader_from_text_and_from_a_files_values():
    assert settings_from(
        Example, {"pair": "2/3", "names": ["a, b", "c"], "mode": True}, text=True
    ) == Example(pair=(2, 3), names=("a, b", "c"), mode="loud")
    # A config file's values go through the same reader: text where the command line takes text.
    assert settings_from(Example, {"pair": "4/5", "names": "one", "mode": False}) == Example(
        pair=(4, 5), names=("one",), mode="silent"
    )
    with pytest.raises(SettingError, match=r"^pair must be written a/b, got '2-3'$"):
        settings_from(Example, {"pair": "2-3"}, text=True)


def test_a_text_field_has_a_text_form_whatever_its_type():
    fields = {item.name: item for item in setting_fields(Example)}
    assert all(item.has_text_form for item in fields.values())
    assert fields["pair"].text == Text(read_pair, "A/B")
    assert fields["mode"].text == Text(read_mode, form="switch")
