"""What the paper's comparison volumes would cost at a measured per-core rate: core-hours, and wall hours on a cluster.

    core-hours             = volume / (rate per core) / 3600
    wall hours on N cores  = core-hours / (N x efficiency)

The volumes are the paper's (Delta Tokenizer paper, the paragraphs after Table 3: "The largest check compares the
fast encoder's whole encodes with the reference on 3.8 billion web documents, 12.3 trillion characters, under each
of the eleven admitted tokenizers, 41.8 billion encodes in all. [...] 102.4 million of these documents, between 512
and 400,000 characters, are split at Delta Tokenizer's cuts under four tokenizers and compared with whole encodes").
The paper gives the level-2 documents' count and size range but not their characters, so level 2 is costed per
document at the measured mean length, and bounded by the range's ends (every document of 512, every one of 400,000
characters) at the measured character rate.

Invariant: every number this module returns is one of the paper's volumes below or arithmetic on a rate and an
efficiency its caller read from a benchmark record; a missing or non-positive rate gives no cost (None), and an
efficiency is used only as measured (capped at 100%) or, when none was measured, as 100% said to be assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "Delta Tokenizer paper, the checks paragraph after Table 3 (search \"41.8 billion\")"
L1_DOCUMENTS = 3_800_000_000  # "3.8 billion web documents"
L1_CHARACTERS = 12_300_000_000_000  # "12.3 trillion characters" (the corpus, encoded under each tokenizer)
L1_TOKENIZERS = 11  # "under each of the eleven admitted tokenizers"
L1_ENCODES = 41_800_000_000  # "41.8 billion encodes in all" (= 3.8 billion documents x 11 tokenizers)
L2_DOCUMENTS = 102_400_000  # "102.4 million of these documents"
L2_TOKENIZERS = 4  # "under four tokenizers"
L2_MIN_CHARS = 512  # "between 512 and 400,000 characters"
L2_MAX_CHARS = 400_000
L1_MEAN_CHARS = L1_CHARACTERS / L1_DOCUMENTS  # 3,236.8 characters per level-1 document (arithmetic on the two)
CLUSTER_CORES = (64, 512, 4_096)  # the Dask cluster sizes the report prices
SECONDS_PER_HOUR = 3_600
FORMULA = ("core-hours = volume / (rate per core) / 3600; wall hours on a cluster of N cores = core-hours / "
           "(N × efficiency)")

CHARS_RATE = "chars_per_s_per_core"  # the benchmark.scale record fields holding the per-core rates
DOCS_RATE = "docs_per_s_per_core"


@dataclass(frozen=True)
class Volume:
    """One of the paper's volumes at one comparison level: its amount, in characters or documents (compared under
    one tokenizer each), the record field whose per-core rate prices it, and where the amount comes from."""

    level: int
    label: str
    amount: float
    unit: str  # "characters" or "documents"
    rate_field: str
    source: str

    @property
    def shown(self) -> str:
        """The amount in words: "12.3 trillion characters", "41.8 billion (document, tokenizer) pairs"."""
        return f"{big(self.amount)} {'characters' if self.unit == 'characters' else '(document, tokenizer) pairs'}"


LEVEL1 = (
    Volume(1, "12.3 trillion characters, one tokenizer", L1_CHARACTERS, "characters", CHARS_RATE,
           "paper: 12.3 trillion characters"),
    Volume(1, "12.3 trillion characters × 11 tokenizers", L1_CHARACTERS * L1_TOKENIZERS, "characters", CHARS_RATE,
           "paper: 12.3 trillion characters under each of the eleven tokenizers"),
    Volume(1, "41.8 billion encodes (3.8 billion documents × 11 tokenizers), at the measured mean document length",
           L1_ENCODES, "documents", DOCS_RATE, "paper: 41.8 billion encodes in all"),
)
LEVEL2 = (
    Volume(2, "102.4 million documents × 4 tokenizers, at the measured mean document length",
           L2_DOCUMENTS * L2_TOKENIZERS, "documents", DOCS_RATE,
           "paper: 102.4 million documents under four tokenizers"),
    Volume(2, "the same if every document had 512 characters (lower bound)",
           L2_DOCUMENTS * L2_TOKENIZERS * L2_MIN_CHARS, "characters", CHARS_RATE,
           "paper: 102.4 million documents x 4 tokenizers x 512 characters"),
    Volume(2, "the same if every document had 400,000 characters (upper bound)",
           L2_DOCUMENTS * L2_TOKENIZERS * L2_MAX_CHARS, "characters", CHARS_RATE,
           "paper: 102.4 million documents x 4 tokenizers x 400,000 characters"),
)
VOLUMES = {1: LEVEL1, 2: LEVEL2}
LEVEL_TITLES = {
    1: "level 1 (whole encodes compared with the reference): 3.8 billion web documents, 12.3 trillion characters, "
       "11 tokenizers, 41.8 billion encodes",
    2: "level 2 (chunked path): 102.4 million documents of 512-400,000 characters, split at the cuts and compared "
       "with whole encodes, 4 tokenizers",
}


def core_hours(amount: float, rate_per_core: float | None) -> float | None:
    """amount / rate / 3600, or None without a positive rate."""
    if rate_per_core is None or rate_per_core <= 0:
        return None
    return amount / rate_per_core / SECONDS_PER_HOUR


def wall_hours(hours: float | None, cores: int, efficiency: float) -> float | None:
    """core-hours / (cores x efficiency), or None without core-hours or with a non-positive efficiency."""
    if hours is None or cores <= 0 or efficiency <= 0:
        return None
    return hours / (cores * efficiency)


def used_efficiency(measured: float | None, basis: str | None = None) -> tuple[float, str]:
    """(the efficiency the wall times use, how it was chosen, value first): the measured one capped at 100% with its
    recorded basis, else 100% said to be assumed."""
    if measured is None or measured <= 0:
        return 1.0, "100% (assumed: no 2-worker vs 1-worker measurement in this run)"
    how = f"measured, 2 worker processes vs 1, {basis} basis" if basis else "measured, 2 worker processes vs 1"
    if measured > 1.0:
        return 1.0, f"100% ({how}: {measured:.1%}, capped at 100%)"
    return measured, f"{measured:.1%} ({how})"


def big(amount: float) -> str:
    """12.3 trillion, 41.8 billion, 409.6 million, or the number with thousands separators below a million."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if amount >= scale:
            return f"{amount / scale:,.1f} {word}"
    return f"{amount:,.0f}"


def duration(hours: float | None) -> str:
    """Hours as "53.4 h (2.2 days)", "12.5 h", or "41.0 min" under an hour; "not measured" without a value."""
    if hours is None:
        return "not measured"
    if hours < 1:
        return f"{hours * 60:,.1f} min"
    text = f"{hours:,.1f} h"
    return text + f" ({hours / 24:,.1f} days)" if hours >= 48 else text
