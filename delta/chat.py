"""Render chat transcripts turn by turn with each tokenizer's own chat template, in jinja2's sandbox.

The template comes from the tokenizer's tokenizer_config.json and runs in an `ImmutableSandboxedEnvironment` set
up as Hugging Face sets it up (trim_blocks, lstrip_blocks, the loop-controls extension, a `tojson` filter,
`raise_exception` and `strftime_now` globals, and bos_token / eos_token / pad_token / unk_token from the config).
A tokenizer whose config has no template (gpt_oss_120b, deepseek_v4_flash) gets `GENERIC_TEMPLATE`, and so does
one provisioned without its config (olmo_3_7b, ministral_3_8b, nemotron_3_nano_4b: no config can be had); every
rendering says which it used (`Rendered.source`: "own", "generic_fallback", or "no_config"), so a check that needs
the tokenizer's own template records "no config" for such a row instead of passing on the generic one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

OWN, FALLBACK, NO_CONFIG = "own", "generic_fallback", "no_config"
GENERIC_TEMPLATE = (
    "{{ bos_token or '' }}{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)
SPECIAL_KEYS = ("bos_token", "eos_token", "pad_token", "unk_token")


class TemplateRenderError(SuiteError):
    """A chat template that raises or cannot be compiled for a transcript."""


@dataclass(frozen=True)
class Rendered:
    """One rendered prefix of a transcript, and whether the tokenizer's own template produced it."""

    text: str
    source: str  # OWN | FALLBACK | NO_CONFIG
    turns: int  # messages rendered


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _tojson(value, ensure_ascii: bool = False, indent: int | None = None, separators=None, sort_keys: bool = False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=1)
def chat_environment() -> ImmutableSandboxedEnvironment:
    """The sandboxed environment, configured as Hugging Face's chat-template renderer configures its own."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def special_token_strings(tok: FrozenTokenizer) -> dict[str, str | None]:
    """bos/eos/pad/unk token strings from tokenizer_config.json (plain strings or AddedToken dicts)."""
    out: dict[str, str | None] = {}
    for key in SPECIAL_KEYS:
        value = tok.config.get(key)
        out[key] = value.get("content") if isinstance(value, dict) else value
    return out


def template_for(tok: FrozenTokenizer) -> tuple[str, str]:
    """(template source, OWN | FALLBACK | NO_CONFIG) for `tok`."""
    if not tok.has_config:
        return GENERIC_TEMPLATE, NO_CONFIG
    return (tok.chat_template, OWN) if tok.chat_template else (GENERIC_TEMPLATE, FALLBACK)


@lru_cache(maxsize=32)
def _compiled(template: str):
    return chat_environment().from_string(template)


def render(tok: FrozenTokenizer, messages: list[dict], add_generation_prompt: bool = False) -> Rendered:
    """The text `tok`'s template renders for `messages` (a clear error, never a traceback, when it cannot)."""
    template, source = template_for(tok)
    try:
        text = _compiled(template).render(
            messages=messages, add_generation_prompt=add_generation_prompt, **special_token_strings(tok)
        )
    except TemplateError as exc:
        raise TemplateRenderError(f"{tok.name}: chat template ({source}) failed: {exc}") from exc
    return Rendered(text, source, len(messages))


def render_turns(tok: FrozenTokenizer, messages: list[dict]) -> list[Rendered]:
    """The transcript as a server sees it turn by turn: each prefix ending in a user message is rendered with the
    generation prompt, each prefix ending in an assistant message without it (a leading system message alone is
    not a turn)."""
    out = []
    for end in range(1, len(messages) + 1):
        last = messages[end - 1]["role"]
        if last == "system":
            continue
        out.append(render(tok, messages[:end], add_generation_prompt=last == "user"))
    return out
