"""The synthetic tokenizers whose derived families the per-code-point gate checks as it checks the known ones.

Admission by proof (spec.proofs.derive) rests on the same per-code-point facts as the six families: every accepted
transition is a piece boundary for every code point on either side, and the left piece closes at the end of input
as at the transition (properties/test_cut_exhaustive.py, generic in the family), and the abstract alphabet the
proof runs over partitions the code points exactly (properties/test_derived_exhaustive.py). `derived_families()`
gives one admitted tokenizer per derived family for those tests: the GPT-2 form (ByteLevel with use_regex, the
real-world one) is the default; more can be named in DELTA_DERIVED_GATE (comma-separated keys of
`GATE_PATTERNS`). Each file is written to a fresh temporary folder of the process that collects the tests. A
user's own files (the user table, `DELTA_USER_TOKENIZERS`, exported by `python -m delta_suite.frozen.export_user_files`
and by
the main job for its `--tokenizer` files) join them when admission admits them under a derived family; a file of a
known family is covered by that family's own tests, and a refused one has no cut to check (its refusal is its
admission's).
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.frozen.user_table import user_table
from delta_suite.spec.admission import admission_of
from delta_suite.spec.families import is_derived

from properties.synthetic import stages_tokenizer

# key -> (Split regexes, ByteLevel use_regex)
GATE_PATTERNS: dict[str, tuple[tuple[str, ...], bool]] = {
    "gpt2": ((), True),
    "digit_pairs": ((r"\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",), False),
}
DEFAULT_GATE = ("gpt2",)


@lru_cache(maxsize=1)
def derived_families() -> dict[str, FrozenTokenizer]:
    """{derived family name: its synthetic tokenizer} for the patterns of the gate (module docstring); a pattern
    that admission refuses is an error, never silently left out."""
    keys = [k for k in os.environ.get("DELTA_DERIVED_GATE", ",".join(DEFAULT_GATE)).split(",") if k]
    folder = Path(tempfile.mkdtemp(prefix="delta-derived-gate-"))
    out: dict[str, FrozenTokenizer] = {}
    for key in keys:
        regexes, use_regex = GATE_PATTERNS[key]
        tok = stages_tokenizer(f"synthetic_derived_{key}", folder, regexes, use_regex=use_regex)
        admission = admission_of(tok)
        if not admission.admitted:
            raise RuntimeError(f"synthetic_derived_{key} is refused: {admission.reason}")
        out[admission.pattern] = tok
    for name in sorted(user_table()):
        tok = load_tokenizer(name)
        admission = admission_of(tok)
        if admission.admitted and is_derived(admission.pattern):
            out.setdefault(admission.pattern, tok)
    return out
