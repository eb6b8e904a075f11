"""Prompt files: a header naming purpose and variables, a system part and a user part.

A prompt file (``src/realrecall/prompts/*.md``, or any file given with ``--prompt``) reads::

    ---
    name: question_generation
    purpose: what the prompt asks for
    variables: passage, title, question_type
    ---
    ## system
    ...
    ## user
    ... {{passage}} ...

Placeholders are ``{{name}}``; rendering substitutes them in one pass, so text inserted from a chunk
is never scanned for placeholders again (a chunk holding ``{{language}}`` stays as written). A
placeholder that is not a declared variable is an error in the prompt file, reported when the file is
loaded. The prompt's ``sha256`` (of the file's bytes) goes into the cache key and every record's
provenance, so editing a prompt regenerates what it produced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from realrecall.errors import InputError

__all__ = ["PromptTemplate", "builtin_prompt", "delimit_data", "load_prompt", "render"]

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_SECTION = re.compile(r"^## (system|user)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    """A parsed prompt file."""

    name: str
    purpose: str
    variables: tuple[str, ...]
    system: str
    user: str
    sha256: str
    path: str


def builtin_prompt(name: str) -> PromptTemplate:
    """One of the prompts shipped under ``realrecall/prompts/`` (``question_generation``, ...)."""
    resource = resources.files("realrecall").joinpath("prompts", f"{name}.md")
    if not resource.is_file():
        raise InputError(f"no built-in prompt named {name!r}")
    return parse_prompt(resource.read_bytes(), source=f"realrecall/prompts/{name}.md")


def load_prompt(path: str | Path) -> PromptTemplate:
    """Read and check a prompt file; errors name the file and line."""
    p = Path(path)
    if not p.is_file():
        raise InputError("prompt file not found", path=p, hint="give the path of a prompt file")
    return parse_prompt(p.read_bytes(), source=str(p))


def parse_prompt(data: bytes, *, source: str) -> PromptTemplate:
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise InputError("prompt file is not valid UTF-8", path=source) from exc
    header, body = _split_header(text, source)
    for key in ("name", "variables"):
        if not header.get(key):
            raise InputError(f"prompt header has no {key!r}", path=source, line=1, hint=_FORMAT_HINT)
    variables = tuple(v.strip() for v in header["variables"].split(",") if v.strip())
    parts = _SECTION.split(body)
    # split() with one group yields [before, name, text, name, text, ...]
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    if "user" not in sections:
        raise InputError("prompt has no '## user' section", path=source, hint=_FORMAT_HINT)
    for section_text in sections.values():
        for match in _PLACEHOLDER.finditer(section_text):
            if match.group(1) not in variables:
                line = text[: text.find(match.group(0))].count("\n") + 1
                raise InputError(
                    f"placeholder {match.group(0)} is not a declared variable",
                    path=source,
                    line=line,
                    hint=f"declared variables: {', '.join(variables)}",
                )
    return PromptTemplate(
        name=header["name"],
        purpose=header.get("purpose", ""),
        variables=variables,
        system=sections.get("system", "").strip("\n"),
        user=sections["user"].strip("\n"),
        sha256=hashlib.sha256(data).hexdigest(),
        path=source,
    )


_FORMAT_HINT = "start with a '---' header (name, purpose, variables), then '## system' and '## user'"


def _split_header(text: str, source: str) -> tuple[dict[str, str], str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise InputError("prompt file has no '---' header", path=source, line=1, hint=_FORMAT_HINT)
    header: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return header, "\n".join(lines[number:])
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise InputError("header line is not 'key: value'", path=source, line=number, hint=_FORMAT_HINT)
        header[key.strip()] = value.strip()
    raise InputError("prompt header is not closed by '---'", path=source, hint=_FORMAT_HINT)


def render(template: PromptTemplate, values: Mapping[str, str]) -> tuple[dict[str, str], ...]:
    """The chat messages of ``template`` with its placeholders filled from ``values`` (all required)."""
    missing = [name for name in template.variables if name not in values]
    if missing:
        raise InputError(
            f"prompt {template.name!r} needs values for {', '.join(missing)}",
            path=template.path,
            hint=f"give every declared variable: {', '.join(template.variables)}",
        )

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)

    messages: list[dict[str, str]] = []
    if template.system:
        messages.append({"role": "system", "content": fill(template.system)})
    messages.append({"role": "user", "content": fill(template.user)})
    return tuple(messages)


def delimit_data(text: str, tag: str) -> str:
    """``text`` made safe to place between ``<tag>`` and ``</tag>``: it cannot close or reopen the tag."""
    return re.sub(rf"<(/?)\s*{re.escape(tag)}", r"[\1" + tag, text, flags=re.IGNORECASE)
