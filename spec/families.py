"""Split-pattern families: the six known ones (`spec.patterns`, `spec.transitions`) and the derived ones that
admission proved for a tokenizer whose Split stages are none of them (`spec.proofs.derive`).

A family is a name for one sequence of Split-stage regexes (Isolated and not inverted, in order, then a plain
ByteLevel) together with the class pairs proved sound for it beyond the floor (`spec.transitions.ACCEPTED_PAIRS`)
and whether its letter runs never take an apostrophe (the L->O carve-out is then not needed). A known family's
facts are the tables of `spec.patterns` and `spec.transitions`; a derived family `derived:<digest>` (the first
12 hex digits of the SHA-256 of its stages, `derived_name`) carries the same facts read off its own z3 proof, and
is registered here in this process when admission admits it (`register`). Every lookup of a family (its stages,
its pairs, its apostrophe rule, the family of a tokenizer's stages) goes through this module, so a derived
family is handled wherever a known one is. An unregistered name is an error, never a silent floor.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from delta_suite.spec.patterns import GPT2, SPLIT_PATTERNS, TOTAL_STAGES, identify
from delta_suite.spec.transitions import APOSTROPHE_FREE, PATTERN_PAIRS

DERIVED_PREFIX = "derived:"
DIGEST_LENGTH = 12

# the reference prepends " " to every piece that reaches its ByteLevel stage without one (byte_level.rs: before the
# regex split and the byte mapping); properties/test_derived_admission.py shows a chunk then encodes unlike the
# whole text's suffix
PREFIX_SPACE_REFUSAL = ("byte_level_add_prefix_space:the reference prepends a space to every piece that reaches "
                        "the ByteLevel stage without one (with no Split stage before it: the first piece of every "
                        "stretch between added tokens), so a chunk starting inside a stretch is encoded with a space "
                        "the whole text does not have there")


@dataclass(frozen=True)
class DerivedFamily:
    """A family admitted by proof: its stages, the pairs proved sound beyond the floor (adopted), and whether the
    apostrophe carve-out (L->' sound) and the CR/LF carve-out (O->CR/LF sound) are proved unnecessary."""

    name: str
    stages: tuple[str, ...]
    pairs: frozenset[tuple[int, int]]
    apostrophe_free: bool
    crlf_free: bool = False


_DERIVED: dict[str, DerivedFamily] = {}
# regexes outside TOTAL_STAGES proved total by admission (spec.proofs.derive.prove_total): each may run Removed and
# inverted, where it keeps exactly the pieces of its Isolated form
_PROVED_TOTAL: set[str] = set()


def stages_digest(stages: tuple[str, ...]) -> str:
    """The SHA-256 of the stages (a JSON list of the regexes, in order): what names and caches a derivation."""
    return hashlib.sha256(json.dumps(list(stages), ensure_ascii=False).encode("utf-8")).hexdigest()


def derived_name(stages: tuple[str, ...]) -> str:
    """`derived:<first 12 hex digits of stages_digest>`."""
    return DERIVED_PREFIX + stages_digest(stages)[:DIGEST_LENGTH]


def is_derived(family: str | None) -> bool:
    return bool(family) and family.startswith(DERIVED_PREFIX)


def register(family: DerivedFamily) -> DerivedFamily:
    """Make a derived family known in this process (idempotent; the name must be the digest of its stages)."""
    if family.name != derived_name(family.stages):
        raise ValueError(f"{family.name} is not the name of its stages ({derived_name(family.stages)})")
    return _DERIVED.setdefault(family.name, family)


def derived(name: str) -> DerivedFamily:
    """The registered derived family `name`; KeyError when admission has not admitted it in this process."""
    try:
        return _DERIVED[name]
    except KeyError:
        raise KeyError(f"{name} is not a registered derived family (admit a tokenizer with these stages first)") \
            from None


def registered() -> tuple[str, ...]:
    """The derived families registered in this process, in registration order."""
    return tuple(_DERIVED)


def is_family(name: str | None) -> bool:
    """A known family or a registered derived one."""
    return name in SPLIT_PATTERNS or name in _DERIVED


def stages_of(family: str) -> tuple[str, ...]:
    """The Split-stage regexes of a known or registered derived family."""
    if family in SPLIT_PATTERNS:
        return SPLIT_PATTERNS[family]
    return derived(family).stages


def pairs_of(family: str) -> frozenset[tuple[int, int]]:
    """The pairs proved sound beyond the floor for a known or registered derived family."""
    if family in PATTERN_PAIRS:
        return PATTERN_PAIRS[family]
    return derived(family).pairs


def is_apostrophe_free(family: str) -> bool:
    """Whether the family's letter runs never take an apostrophe (L->' proved sound)."""
    if family in SPLIT_PATTERNS:
        return family in APOSTROPHE_FREE
    return derived(family).apostrophe_free


def register_total(regex: str) -> None:
    """Record that `regex`'s matches tile every text (proved: `spec.proofs.derive.prove_total`)."""
    _PROVED_TOTAL.add(regex)


def is_total(regex: str) -> bool:
    """`regex` may run Removed and inverted: one of TOTAL_STAGES, or proved total in this process."""
    return regex in TOTAL_STAGES or regex in _PROVED_TOTAL


def removed_inverted_regexes(pre_tokenizer: dict | None) -> list[str]:
    """The regexes of the Split stages of a pre-tokenizer section that run Removed and inverted."""
    return [regex for regex, form in _split_forms(pre_tokenizer) if form == ("Removed", True)]


def split_regexes(pre_tokenizer: dict | None) -> list[str]:
    """The regexes of every Split stage of a pre-tokenizer section over a regex, in stage order, whatever their
    behavior (a stage matching a plain string has none)."""
    return [regex for regex, _ in _split_forms(pre_tokenizer)]


def _split_forms(pre_tokenizer: dict | None) -> list[tuple[str, tuple[object, bool]]]:
    """(regex, (behavior, invert)) of each Split stage over a regex, in stage order."""
    if not pre_tokenizer:
        return []
    stages = pre_tokenizer.get("pretokenizers") if pre_tokenizer.get("type") == "Sequence" else [pre_tokenizer]
    return [(s["pattern"]["Regex"], (s.get("behavior"), bool(s.get("invert")))) for s in stages or []
            if s.get("type") == "Split" and "Regex" in (s.get("pattern") or {})]


def is_crlf_free(family: str) -> bool:
    """Whether no punctuation run of the family takes a CR or LF after it (O->CR/LF proved sound): only derived
    families are (no known one is)."""
    if family in SPLIT_PATTERNS:
        return False
    return derived(family).crlf_free


def family_of_stages(stages: tuple[str, ...]) -> str | None:
    """The known family with exactly these stages, else the registered derived one, else None."""
    known = identify(stages)
    if known is not None:
        return known
    name = derived_name(stages)
    return name if name in _DERIVED else None


def split_stages(pre_tokenizer: dict | None) -> tuple[tuple[str, ...], str | None]:
    """The Split regexes in order, and a refusal detail when the pre-tokenizer is not Split* then ByteLevel."""
    if pre_tokenizer is None:
        return (), "no pre-tokenizer"
    stages = pre_tokenizer.get("pretokenizers") if pre_tokenizer.get("type") == "Sequence" else [pre_tokenizer]
    stages = stages or []
    if not stages or stages[-1].get("type") != "ByteLevel":
        return (), "last pre-tokenizer stage is not ByteLevel"
    last = stages[-1]
    if last.get("add_prefix_space", True):
        return (), PREFIX_SPACE_REFUSAL
    regexes = []
    for stage in stages[:-1]:
        if stage.get("type") != "Split":
            return (), f"stage {stage.get('type')} is not Split"
        pattern = stage.get("pattern", {})
        if "Regex" not in pattern:
            return (), "Split stage matches a string, not a regex"
        form = (stage.get("behavior"), bool(stage.get("invert")))
        if form == ("Removed", True) and not is_total(pattern["Regex"]):
            return (), "split_removed_inverted_not_total"
        if form not in (("Isolated", False), ("Removed", True)):
            return (), "Split stage is neither Isolated nor Removed and inverted"
        regexes.append(pattern["Regex"])
    if last.get("use_regex", True):
        regexes.append(GPT2)  # ByteLevel splits each piece it receives with the GPT-2 pattern, Isolated
    return tuple(regexes), None
