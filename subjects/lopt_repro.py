"""The LoPT byte-split seam: find, deterministically, a multi-byte text where position-only joining gives a wrong ID.

A chunk that ends right after a character whose bytes the whole encode divides between two tokens encodes that
character as one token; the span of that token equals the span of the whole encode's first piece, so a
position-only match accepts the seam and the join keeps the wrong token. The search draws texts of one script
from a seeded generator and returns the first text where position-only LoPT differs from the reference while
the ID-comparing variant does not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.subjects.lopt import LoptParams, lopt_encode
from delta_suite.subjects.replay import first_difference

# The first 120 characters of the Thousand Character Classic plus the paper's pair (U+547D U+6570).
CJK_ALPHABET = (
    "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜金生丽水玉出昆冈剑号巨阙珠称"
    "夜光果珍李柰菜重芥姜海咸河淡鳞潜羽翔龙师火帝鸟官人皇始制文字乃服衣裳推位让国有虞陶唐吊民伐罪周发殷汤坐朝问道"
    "垂拱平章爱育黎首臣伏戎羌遐迩一体率宾归王命数，。"
)
HANGUL_ALPHABET = "가나다라마바사아자차카타파하한국어텍스트테스트입니다의를은는이가에서으로 ."
KANA_ALPHABET = "あいうえおかきくけこさしすせそたちつてとなにぬねのカタカナひらがな日本語の、。"
ALPHABETS = {"cjk": CJK_ALPHABET, "hangul": HANGUL_ALPHABET, "kana": KANA_ALPHABET}


@dataclass
class LoptTrigger:
    """A text on which position-only LoPT returns a wrong ID, with the seam facts."""

    text: str
    script: str
    seed: int
    trial: int
    position: int
    lopt_ids: list[int]
    reference_ids: list[int]
    chars: str
    same_length: bool

    def describe(self) -> dict:
        return {
            "script": self.script,
            "seed": self.seed,
            "trial": self.trial,
            "text_chars": len(self.text),
            "first_difference_token": self.position,
            "lopt_ids": self.lopt_ids,
            "reference_ids": self.reference_ids,
            "characters_at_seam": self.chars,
            "code_points": " ".join(f"U+{ord(c):04X}" for c in self.chars),
            "same_length": self.same_length,
        }


def candidate_text(alphabet: str, length: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def check_text_pair(tok, text: str) -> tuple[bool, bool, list[int], list[int], list[int]]:
    """(position-only LoPT differs from the reference, ID-comparing LoPT equals it, lopt, lopt_ids, reference)."""
    ref = reference_encode(tok, text)
    pos, _ = lopt_encode(tok, text, LoptParams(compare_ids=False))
    ids, _ = lopt_encode(tok, text, LoptParams(compare_ids=True))
    return pos != ref, ids == ref, pos, ids, ref


def describe_trigger(tok, text: str, script: str, seed: int, trial: int) -> LoptTrigger:
    ref, offsets = reference_encode_with_offsets(tok, text)
    pos, _ = lopt_encode(tok, text, LoptParams(compare_ids=False))
    p = first_difference(pos, ref)
    a, b = offsets[max(0, p - 1)][0], offsets[min(len(offsets) - 1, p + 1)][1]
    return LoptTrigger(text, script, seed, trial, p, pos[p : p + 2], ref[p : p + 2], text[a:b], len(pos) == len(ref))


def find_trigger(
    tok, script: str = "cjk", *, seed: int = 0, length: int = 2048, max_trials: int = 400
) -> LoptTrigger | None:
    """The first seeded candidate where position-only LoPT is wrong and the ID-comparing variant is right, or None."""
    rng = random.Random(seed)
    alphabet = ALPHABETS[script]
    for trial in range(max_trials):
        text = candidate_text(alphabet, length, rng)
        wrong, ids_ok, *_ = check_text_pair(tok, text)
        if wrong and ids_ok:
            return describe_trigger(tok, text, script, seed, trial)
    return None
