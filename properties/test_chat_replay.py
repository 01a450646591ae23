"""Replay: every turn of every chat transcript, rendered with each tokenizer's own template, through one Session.

Each turn's text goes through `Session.encode` and is compared with the reference; the fast-path share (repairs
among the turns whose stored text was a proper prefix) is recorded. Raw-text sessions replay the whitespace case
that broke fastokens (a turn ending in a newline and spaces, the next starting with a newline and spaces), and
the same replay with unchecked reuse must find it.
"""

from __future__ import annotations

from collections import Counter

from delta_suite.delta.chat import FALLBACK, NO_CONFIG, OWN, render, render_turns
from delta_suite.delta.chat_samples import CHATS, RAW_SESSIONS
from delta_suite.delta.session import Session
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.frozen.provision import installed
from delta_suite.frozen.registry import rows
from delta_suite.spec.reference import reference_encode
from delta_suite.spec.repair import RepairParams

from properties.conftest import PROVISIONED

NO_TEMPLATE = {"gpt_oss_120b", "deepseek_v4_flash"}
MIN_FAST_SHARE = 0.5


def replay(tok: FrozenTokenizer, turns: list[str], params: RepairParams | None = None) -> tuple[int, Counter]:
    """Feed `turns` (full texts) to one Session; (turns whose IDs differ from the reference, paths taken)."""
    session = Session(tok) if params is None else Session(tok, params)
    differences, paths = 0, Counter()
    for text in turns:
        differences += session.encode(text) != reference_encode(tok, text)
        paths[session.last_path.split(":")[0]] += 1
    return differences, paths


def test_chat_transcripts_replay(tok, ledger) -> None:
    """Every rendered turn of every transcript equals the reference through a Session; at least half of the
    extensions take the repair path. A tokenizer provisioned without its config renders with the generic template
    and its record says "no config" (its own template cannot be checked)."""
    differences, paths, sources = 0, Counter(), set()
    for messages in CHATS.values():
        rendered = render_turns(tok, messages)
        sources |= {r.source for r in rendered}
        d, p = replay(tok, [r.text for r in rendered])
        differences += d
        paths += p
    extensions = paths["repaired"] + paths["fallback"]
    ledger.record("repair", "chat_replay", tok, comparisons=sum(paths.values()), differences=differences,
                  fast_path=paths["repaired"], fallbacks=paths["fallback"], unit="turn",
                  details={"paths": dict(paths), "template": sorted(sources), "transcripts": len(CHATS),
                           "config": "loaded" if tok.has_config else "no config"}, oracle="reference")
    assert differences == 0
    if not tok.has_config:  # provisioned "no config": rendered with the generic template and recorded as such
        assert sources == {NO_CONFIG}
    else:
        assert sources == ({FALLBACK} if tok.name in NO_TEMPLATE else {OWN})
    assert extensions and paths["repaired"] / extensions >= MIN_FAST_SHARE, dict(paths)


def test_fastokens_whitespace_case(tok, ledger) -> None:
    """Raw turns appended as they are: the Session equals the reference on every turn, while unchecked reuse
    (stored IDs + encode of the delta alone) differs on at least one turn of the whitespace session."""
    differences, paths = 0, Counter()
    for turns in RAW_SESSIONS.values():
        texts = ["".join(turns[: i + 1]) for i in range(len(turns))]
        d, p = replay(tok, texts)
        differences += d
        paths += p
    broken_texts = ["".join(RAW_SESSIONS["fastokens_whitespace"][: i + 1]) for i in range(4)]
    broken, _ = replay(tok, broken_texts, RepairParams(check_seam=False))
    ledger.record("repair", "fastokens_whitespace_replay", tok, comparisons=sum(paths.values()),
                  differences=differences, fast_path=paths["repaired"], fallbacks=paths["fallback"], unit="turn",
                  details={"paths": dict(paths), "unchecked_reuse_differences": broken}, oracle="reference")
    assert differences == 0
    assert paths["repaired"] >= 1
    assert broken >= 1, "unchecked reuse should split the whitespace run at the seam"


def test_replay_reports_unprovisioned(ledger) -> None:
    """Tokenizers that are not provisioned are reported as such in the ledger, never silently passed: the rows the
    replay left out (not in PROVISIONED, the loader's list) are exactly the registry rows with no installed files
    on disk (frozen.provision.installed), so no provisioned tokenizer is dropped from the replay unreported."""
    missing = sorted(r.name for r in rows() if r.name not in PROVISIONED)
    on_disk = {r.name for r in rows() if installed(r) is not None}
    disagree = sorted(r.name for r in rows() if (r.name in PROVISIONED) != (r.name in on_disk))
    ledger.record("harness", "harness.replay_provisioning", None, comparisons=len(rows()), differences=len(disagree),
                  unit="tokenizer", details={"not_provisioned": missing, "provisioned": sorted(PROVISIONED),
                                             "loader_vs_disk": disagree}, oracle="self")
    assert disagree == [], f"the loader and the installed files disagree on {disagree}"
    assert missing == sorted(r.name for r in rows() if r.name not in on_disk)


class _ConfigOnly:
    """What `delta.chat.render` reads of a tokenizer: a config with its template and special-token entries."""

    name = "config_only"
    has_config = True

    def __init__(self, config: dict) -> None:
        self.config = config
        self.chat_template = config["chat_template"]


def test_templates_see_the_config_special_tokens(tok, ledger) -> None:
    """A template that writes `bos_token` gets the config's string (a plain string or an AddedToken's content), as
    Hugging Face's renderer passes it: on a stand-in config of each form, and on `tok` when its own template uses
    it (deepseek_v3's starts every conversation with it). A renderer that drops the special-token strings renders
    nothing there and fails this test (the encodes cannot see it: the reference encodes the same rendered text)."""
    messages = [{"role": "user", "content": "hi"}]
    template = "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{{ eos_token }}{% endfor %}"
    plain = _ConfigOnly({"chat_template": template, "bos_token": "<s>", "eos_token": "</s>"})
    added = _ConfigOnly({"chat_template": template, "bos_token": {"__type": "AddedToken", "content": "<B>"},
                         "eos_token": {"__type": "AddedToken", "content": "<E>"}})
    assert [r.text for r in render_turns(plain, messages)] == ["<s>hi</s>"]
    assert [r.text for r in render_turns(added, messages)] == ["<B>hi<E>"]
    # the environment as Hugging Face configures it: trim_blocks drops the newline after a block tag, lstrip_blocks
    # the indentation before one
    blocks = _ConfigOnly({"chat_template": "{% for m in messages %}\n  {% if m['content'] %}\n{{ m['content'] }}|"
                                           "{% endif %}\n{% endfor %}"})
    assert [r.text for r in render_turns(blocks, messages)] == ["hi|"]
    # one rendering per turn: every prefix ending in a user or assistant message, from the first one
    talk = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    assert [(r.turns, r.text) for r in render_turns(plain, talk)] == [(2, "<s>s</s>a</s>"), (3, "<s>s</s>a</s>b</s>"),
                                                                     (4, "<s>s</s>a</s>b</s>c</s>")]
    assert [r.turns for r in render_turns(plain, talk[1:])] == [1, 2, 3]
    bos = tok.config.get("bos_token") if tok.has_config else None
    bos = bos.get("content") if isinstance(bos, dict) else bos
    uses = bool(tok.has_config and tok.chat_template and "bos_token" in tok.chat_template and bos)
    rendered = render_turns(tok, messages)[0].text if uses else ""
    ledger.record("repair", "chat.template_special_tokens", tok, comparisons=2 + uses,
                  differences=int(uses and bos not in rendered), unit="renderings",
                  details={"bos_token": bos, "template_uses_bos": uses}, oracle="premise")
    if uses:
        assert bos in rendered, (bos, rendered[:80])


def test_template_filters_and_defaults_as_hugging_face() -> None:
    """The `tojson` filter writes JSON as Hugging Face's renderer does (non-ASCII characters kept, keys in their
    order, indent passed through), and `render` asks for no generation prompt unless told. A template writing tool
    arguments renders other text otherwise, and the encodes cannot see it (the reference encodes the same text)."""
    template = ("{{ {'b': '\u00e9', 'a': 1} | tojson }}|{{ [1] | tojson(indent=2) }}|"
                "{% if add_generation_prompt %}GEN{% endif %}")
    config = _ConfigOnly({"chat_template": template})
    messages = [{"role": "user", "content": "x"}]
    assert render(config, messages).text == '{"b": "\u00e9", "a": 1}|[\n  1\n]|'
    assert render(config, messages, add_generation_prompt=True).text.endswith("|GEN")
    # turn by turn, a rendering ending in a user message asks for the generation prompt, one ending in an
    # assistant message does not
    prompts = _ConfigOnly({"chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"
                                            "{% if add_generation_prompt %}>{% endif %}"})
    talk = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    assert [r.text for r in render_turns(prompts, talk)] == ["a>", "ab", "abc>"]
