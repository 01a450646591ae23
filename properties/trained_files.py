"""Real tokenizer.json files for tests: real pipelines, trained on real text, built once and cached.

Every builder trains a small vocabulary on the same corpus, `training_text.txt` beside this module: a snapshot of
this repository's own Markdown (`docs/**/*.md` and `README.md`, in sorted path order, about 190,000 characters)
and the built-in multilingual samples (`spec.vacuity.PROBE_TEXTS`: Latin with accents, Cyrillic, Greek, Arabic,
Hebrew, Devanagari, Thai, CJK, emoji), fixed so that a documentation edit retrains nothing. Nothing is downloaded
and nothing machine-specific is read, so a fresh clone builds the same bytes.

A built file lives under `$DELTA_HOME/trained-tokenizers/` (else `$XDG_CACHE_HOME/delta-suite/...`, else
`~/.cache/delta-suite/...`), named `<recipe>-<key>.json`. The key hashes the recipe's name, `RECIPE_VERSION`, this
module's text, the corpus text and the versions of the libraries that build it (`tokenizers`; for the SentencePiece
route also `sentencepiece`, `protobuf` and `transformers`). A file is rebuilt only when one of those changes, and
is written atomically, so parallel test workers never read half a file.

Reproducible bytes: the `tokenizers` 0.23.3 trainers iterate hash maps seeded at random per process, which changes
the output of `BpeTrainer`/`WordPieceTrainer` with an affix ("##", "</w>") and of `UnigramTrainer` from run to run
(plain BPE is stable). `_pinned_alphabet` and `_canonical_unigram` remove that; every file here was built
byte-identically in fresh processes, also under RAYON_NUM_THREADS 1 to 16. Training runs with
`TOKENIZERS_PARALLELISM=false` (restored afterwards), so no work stealing orders the float sums; UnigramTrainer
still groups its sums by rayon's thread count, a ~1e-14 effect that the rounding in `_canonical_unigram` absorbs.

The SentencePiece route (`sentencepiece_unigram`) needs the optional packages `sentencepiece`, `protobuf` and
`transformers` (no PyTorch); tests that use it should `pytest.importorskip("transformers")` first.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import tokenizers
from delta_suite.frozen.cache import cache_root, ensure_writable
from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors, trainers
from tokenizers.models import BPE, Unigram, WordPiece

RECIPE_VERSION = 1  # bump when a recipe changes in a way the key would not see
REPO = Path(__file__).resolve().parents[1]
SUBFOLDER = "trained-tokenizers"

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
T5_SPECIALS = ["<pad>", "</s>", "<unk>"]
CLIP_SPECIALS = ["<|startoftext|>", "<|endoftext|>"]
SENTENCEPIECE_RULES = ("nmt_nfkc", "identity", "nfkc", "nmt_nfkc_cf", "nfkc_cf")
SENTENCEPIECE_CONVERTERS = ("t5", "spm", "proto")


# ---------------------------------------------------------------------------------------------------------------
# The corpus and the cache


def corpus_documents() -> list[Path]:
    """The repository's Markdown the corpus reads: `docs/**/*.md` in sorted order, then `README.md`."""
    return sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]


TRAINING_TEXT = Path(__file__).with_name("training_text.txt")


def corpus_lines() -> list[str]:
    """The training text, one non-empty line per item: `training_text.txt`, a snapshot of the lines of this
    repository's Markdown (`corpus_documents`) and the built-in samples taken when the files were first trained,
    kept fixed so that editing the documentation does not retrain the files (their vocabularies, and so which
    battery strings kill a control, would change with every edit)."""
    return [line for line in TRAINING_TEXT.read_text(encoding="utf-8").splitlines() if line]


def corpus_digest() -> str:
    """sha256 of the corpus lines (joined by newlines): the part of every cache key that the text decides."""
    return hashlib.sha256("\n".join(corpus_lines()).encode("utf-8")).hexdigest()


def cache_dir() -> Path:
    """`<suite cache>/trained-tokenizers`, created and proved writable."""
    return ensure_writable(cache_root() / SUBFOLDER)


def _key(recipe: str, versions: dict[str, str]) -> str:
    """The cache key of `recipe`: its name, `RECIPE_VERSION`, this module's text (an edited recipe rebuilds even
    when the version was not bumped), the corpus digest and the library versions."""
    module = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    facts = {"recipe": recipe, "recipe_version": RECIPE_VERSION, "module": module, "corpus": corpus_digest()}
    facts.update(versions)
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the cache is read by other users' test runs too
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _cached(recipe: str, build: Callable[[], str], versions: dict[str, str] | None = None) -> Path:
    """The cached file of `recipe`, built by `build()` (a tokenizer.json string) when absent."""
    path = cache_dir() / f"{recipe}-{_key(recipe, {'tokenizers': tokenizers.__version__, **(versions or {})})}.json"
    if not path.exists():
        _write_atomically(path, build().encode("utf-8"))
    return path


@contextlib.contextmanager
def _sequential() -> Iterator[None]:
    """Run the `tokenizers` trainers on one thread (`TOKENIZERS_PARALLELISM=false`), restoring the setting after.

    A guard, not a cure: the bytes were the same without it on 2 cores (the hash-map orders were the real cause).
    """
    before = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TOKENIZERS_PARALLELISM"]
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = before


def _train(tokenizer: Tokenizer, trainer: trainers.Trainer) -> Tokenizer:
    """Train `tokenizer` on the corpus lines with `trainer`, on one thread."""
    with _sequential():
        tokenizer.train_from_iterator(corpus_lines(), trainer=trainer)
    return tokenizer


def _words(tokenizer: Tokenizer) -> set[str]:
    """The distinct words a trainer sees: each corpus line normalized, then pre-tokenized, by `tokenizer`."""
    normalizer, pre_tokenizer = tokenizer.normalizer, tokenizer.pre_tokenizer
    words: set[str] = set()
    for line in corpus_lines():
        text = normalizer.normalize_str(line) if normalizer is not None else line
        words.update(word for word, _ in pre_tokenizer.pre_tokenize_str(text))
    return words


def _pinned_alphabet(tokenizer: Tokenizer, prefix: str = "", suffix: str = "") -> list[str]:
    """The trainer's initial symbols, in a fixed order: the characters, then their affixed forms.

    `BpeTrainer` (and `WordPieceTrainer`, which runs it) gives the affixed symbols ("##a", "a</w>") their ids in the
    iteration order of a hash map seeded at random per process, and breaks ties between equally frequent pairs by
    id, so the merges and the ids differ from run to run (tokenizers 0.23.3; without an affix the bytes are stable).
    Passing these symbols first, as special tokens, gives each a fixed id (ascending code points, as the trainer
    orders the plain characters itself); `_unpin` then removes them from the added tokens. The merges the trainer
    learns are otherwise its own. Words are those `_words` lists; the alphabet is not limited.
    """
    chars: set[str] = set()
    affixed: set[str] = set()
    for word in _words(tokenizer):
        chars.update(word)
        for i, char in enumerate(word):
            symbol = (prefix if prefix and i > 0 else "") + char + (suffix if suffix and i == len(word) - 1 else "")
            if symbol != char:
                affixed.add(symbol)
    return sorted(chars) + sorted(affixed, key=lambda s: [ord(c) for c in s])


def _unpin(tokenizer: Tokenizer, keep: list[str]) -> Tokenizer:
    """`tokenizer` with only the added tokens named in `keep` (the pinned alphabet stays in the model's vocab)."""
    data = json.loads(tokenizer.to_str())
    data["added_tokens"] = [token for token in data["added_tokens"] if token["content"] in keep]
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


# ---------------------------------------------------------------------------------------------------------------
# tokenizers' own trainers


def _bert_wordpiece_json(lowercase: bool) -> str:
    """The tokenizer.json of a BERT-style WordPiece (see `bert_wordpiece`)."""
    tokenizer = Tokenizer(WordPiece(unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None if lowercase else False, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    trainer = trainers.WordPieceTrainer(
        vocab_size=3000, min_frequency=2, special_tokens=BERT_SPECIALS + _pinned_alphabet(tokenizer, prefix="##"),
        continuing_subword_prefix="##", show_progress=False,
    )
    tokenizer = _unpin(_train(tokenizer, trainer), BERT_SPECIALS)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tokenizer.to_str()


def bert_wordpiece(lowercase: bool = True) -> Path:
    """A BERT WordPiece file (3,000 pieces) trained on the corpus with `WordPieceTrainer`.

    Laid out like bert-base-uncased (`lowercase=True`: BertNormalizer lowercasing, accents stripped by default) or
    bert-base-cased (`lowercase=False`: `strip_accents=False`): BertPreTokenizer, WordPiece with `[UNK]` and the
    `##` prefix, TemplateProcessing `[CLS] $A [SEP]` (pair `... $B:1 [SEP]:1`), WordPiece decoder. The specials
    `[PAD] [UNK] [CLS] [SEP] [MASK]` are ids 0-4, special and not normalized.
    """
    recipe = "bert-wordpiece-uncased" if lowercase else "bert-wordpiece-cased"
    return _cached(recipe, lambda: _bert_wordpiece_json(lowercase))


def _unigram_metaspace_nfkc_json() -> str:
    """The tokenizer.json of `unigram_metaspace_nfkc`."""
    tokenizer = Tokenizer(Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(
        vocab_size=2000, special_tokens=T5_SPECIALS, unk_token="<unk>", show_progress=False,
        shrinking_factor=0.75, max_piece_length=16, n_sub_iterations=2,
    )
    tokenizer = _canonical_unigram(_train(tokenizer, trainer), len(T5_SPECIALS))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A:0 </s>:0", pair="$A:0 </s>:0 $B:0 </s>:0", special_tokens=[("</s>", tokenizer.token_to_id("</s>"))]
    )
    return tokenizer.to_str()


SCORE_DECIMALS = 6  # UnigramTrainer's scores vary by ~1e-14 between runs (float sums over a hash-ordered map)
PENALTY_STEP = 1e-4  # UnigramTrainer's step between the scores it gives required characters the model lacks


def _canonical_unigram(tokenizer: Tokenizer, specials: int) -> Tokenizer:
    """The trained Unigram with its run-to-run noise removed; the pieces are the trainer's own.

    `UnigramTrainer` (tokenizers 0.23.3) is not reproducible across processes, in three ways, all from iterating hash
    maps seeded at random per process: the scores differ by about 1e-14 (float sums in another order); the required
    characters the model lacks get the scores `min, min - 1e-4, min - 2e-4, ...` in random order; and pieces of equal
    score come in random order. So: scores are rounded to `SCORE_DECIMALS` places; the trailing run of single
    characters spaced `PENALTY_STEP` apart is given those scores in code-point order; the pieces after the first
    `specials` are sorted by score, ties by code points. The piece set and every other score are unchanged.
    """
    data = json.loads(tokenizer.to_str())
    vocab = data["model"]["vocab"]
    head = vocab[:specials]
    pieces = [[piece, round(score, SCORE_DECIMALS)] for piece, score in vocab[specials:]]
    pieces.sort(key=lambda item: (-item[1], [ord(c) for c in item[0]]))
    tail = len(pieces) - 1
    while (
        tail > 0 and len(pieces[tail][0]) == 1 and len(pieces[tail - 1][0]) == 1
        and abs(pieces[tail - 1][1] - pieces[tail][1] - PENALTY_STEP) < 10 ** -(SCORE_DECIMALS - 1)
    ):
        tail -= 1
    scores = [score for _, score in pieces[tail:]]
    chars = sorted(piece for piece, _ in pieces[tail:])
    pieces[tail:] = [[char, score] for char, score in zip(chars, scores, strict=True)]
    data["model"]["vocab"] = head + pieces
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def unigram_metaspace_nfkc() -> Path:
    """A Unigram file (2,000 pieces) trained on the corpus with tokenizers' `UnigramTrainer`.

    NFKC normalizer; Metaspace pre-tokenizer and decoder (replacement "▁", prepend_scheme "always", split true);
    `<pad> </s> <unk>` are ids 0-2 with `<unk>` the unknown piece; TemplateProcessing `$A </s>` as in T5. The
    trainer's run-to-run noise is removed by `_canonical_unigram` (scores rounded to 6 places).
    """
    return _cached("unigram-metaspace-nfkc", _unigram_metaspace_nfkc_json)


def _bpe_nfkc_lowercase_digits_json() -> str:
    """The tokenizer.json of `bpe_nfkc_lowercase_digits`."""
    tokenizer = Tokenizer(BPE(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)]
    )
    trainer = trainers.BpeTrainer(vocab_size=2000, min_frequency=2, special_tokens=BERT_SPECIALS, show_progress=False)
    return _train(tokenizer, trainer).to_str()


def bpe_nfkc_lowercase_digits() -> Path:
    """A BPE file (2,000 tokens) trained on the corpus with `BpeTrainer`, as in the tokenizers quicktour.

    Normalizer Sequence[NFKC, Lowercase]; pre-tokenizer Sequence[Whitespace, Digits(individual_digits=True)];
    BPE with unk token `[UNK]`; specials `[PAD] [UNK] [CLS] [SEP] [MASK]` (ids 0-4); no post-processor or decoder.
    """
    return _cached("bpe-nfkc-lowercase-digits", _bpe_nfkc_lowercase_digits_json)


def _bpe_end_of_word_suffix_json() -> str:
    """The tokenizer.json of `bpe_end_of_word_suffix`."""
    tokenizer = Tokenizer(BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.BPEDecoder(suffix="</w>")
    trainer = trainers.BpeTrainer(
        vocab_size=2000, min_frequency=2, special_tokens=CLIP_SPECIALS + _pinned_alphabet(tokenizer, suffix="</w>"),
        end_of_word_suffix="</w>", show_progress=False,
    )
    tokenizer = _unpin(_train(tokenizer, trainer), CLIP_SPECIALS)
    start, end = tokenizer.token_to_id("<|startoftext|>"), tokenizer.token_to_id("<|endoftext|>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<|startoftext|>:0 $A:0 <|endoftext|>:0",
        pair="<|startoftext|>:0 $A:0 <|endoftext|>:0 $B:1 <|endoftext|>:1",
        special_tokens=[("<|startoftext|>", start), ("<|endoftext|>", end)],
    )
    return tokenizer.to_str()


def bpe_end_of_word_suffix() -> Path:
    """A CLIP-like BPE file (2,000 tokens) whose word-final pieces end in "</w>", trained with `BpeTrainer`.

    Normalizer Sequence[NFC, Lowercase] (CLIP's, less its Replace(\\s+ -> " ")); pre-tokenizer Whitespace (CLIP
    itself uses a Split regex and ByteLevel); BPE with `end_of_word_suffix="</w>"` and unk `<|endoftext|>`;
    BPEDecoder("</w>"); TemplateProcessing `<|startoftext|> $A <|endoftext|>`; the two specials are ids 0-1.
    """
    return _cached("bpe-end-of-word-suffix", _bpe_end_of_word_suffix_json)


def _bpe_continuing_subword_prefix_json() -> str:
    """The tokenizer.json of `bpe_continuing_subword_prefix`."""
    tokenizer = Tokenizer(BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    trainer = trainers.BpeTrainer(
        vocab_size=2000, min_frequency=2, special_tokens=BERT_SPECIALS + _pinned_alphabet(tokenizer, prefix="##"),
        continuing_subword_prefix="##", show_progress=False,
    )
    return _unpin(_train(tokenizer, trainer), BERT_SPECIALS).to_str()


def bpe_continuing_subword_prefix() -> Path:
    """A cased BPE file (2,000 tokens) whose word-inner pieces start with "##", trained with `BpeTrainer`.

    Normalizer NFKC; pre-tokenizer Whitespace; BPE with `continuing_subword_prefix="##"` and unk `[UNK]`;
    WordPiece decoder (prefix "##", no cleanup); specials `[PAD] [UNK] [CLS] [SEP] [MASK]` (ids 0-4).
    """
    return _cached("bpe-continuing-subword-prefix", _bpe_continuing_subword_prefix_json)


# ---------------------------------------------------------------------------------------------------------------
# The SentencePiece route: spm_train, then the transformers converter


def _sentencepiece_versions() -> dict[str, str]:
    """The versions the SentencePiece route's key includes, read without importing (transformers takes ~2 s).

    ImportError when one of the packages is not installed.
    """
    versions = {}
    for package in ("sentencepiece", "protobuf", "transformers"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ImportError(f"the SentencePiece route needs the package {package!r}: pip install {package}") from exc
    return versions


def _sentencepiece_model_bytes(rule: str) -> bytes:
    """A unigram `.model` (2,000 pieces, T5's ids: pad 0, eos 1, unk 2, no bos) from spm_train on the corpus."""
    import sentencepiece

    sentencepiece.set_random_generator_seed(20261206)
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus_lines()), model_writer=model, model_type="unigram", vocab_size=2000,
        normalization_rule_name=rule, character_coverage=1.0, num_threads=1, input_sentence_size=0,
        shuffle_input_sentence=False, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2,
    )
    return model.getvalue()


def sentencepiece_model(rule: str = "nmt_nfkc") -> Path:
    """The SentencePiece unigram `.model` behind `sentencepiece_unigram(rule)`, cached beside it.

    Trained by `SentencePieceTrainer.train` on the corpus lines: unigram, 2,000 pieces, `normalization_rule_name`
    `rule`, `character_coverage=1.0`, one thread, a fixed seed, no input sampling or shuffling.
    """
    if rule not in SENTENCEPIECE_RULES:
        raise ValueError(f"unknown normalization rule {rule!r}; one of {SENTENCEPIECE_RULES}")
    recipe = f"spm-unigram-{rule}"
    key = _key(recipe, {"tokenizers": tokenizers.__version__, **_sentencepiece_versions()})
    path = cache_dir() / f"{recipe}-{key}.model"
    if not path.exists():
        _write_atomically(path, _sentencepiece_model_bytes(rule))
    return path


def _convert(model: Path, converter: str) -> str:
    """The tokenizer.json string that transformers makes of the SentencePiece `model` by route `converter`."""
    from transformers.convert_slow_tokenizer import SpmConverter, import_protobuf

    if converter == "t5":
        from transformers import T5Tokenizer

        with tempfile.TemporaryDirectory() as folder:
            shutil.copyfile(model, Path(folder) / "spiece.model")
            # a local folder: transformers reads spiece.model from it and asks no hub
            return T5Tokenizer.from_pretrained(folder).backend_tokenizer.to_str()
    proto = import_protobuf().ModelProto()
    proto.ParseFromString(model.read_bytes())
    if converter == "spm":

        class _Original:  # what SpmConverter reads of a slow tokenizer
            vocab_file = str(model)
            add_prefix_space = True
            legacy = True

        return SpmConverter(_Original()).converted().to_str()
    vocab = [(piece.piece, piece.score) for piece in proto.pieces]
    return SpmConverter.build_tokenizer_from_spm_proto(proto, vocab).to_str()


def sentencepiece_unigram(rule: str = "nmt_nfkc", converter: str = "t5") -> Path:
    """A SentencePiece unigram model (`sentencepiece_model(rule)`) converted to tokenizer.json by transformers.

    `converter` picks the conversion:
    - "t5": `transformers.T5Tokenizer.from_pretrained` on a folder holding the model as `spiece.model` (what
      transformers 5 does with a T5 checkpoint): normalizer Precompiled (none under rule "identity"),
      pre-tokenizer Sequence[WhitespaceSplit, Metaspace(always, split)], Metaspace decoder, TemplateProcessing
      `$A </s>`, and `<extra_id_99>`..`<extra_id_0>` as special added tokens after the 2,000 pieces;
    - "spm": the generic `SpmConverter(...).converted()` (XLM-R/ALBERT-family base): Sequence[Precompiled,
      Strip(right), Replace(" {2,}" -> "▁")], Metaspace(always, split), no post-processor;
    - "proto": `SpmConverter.build_tokenizer_from_spm_proto` (transformers 5's path for a model without a
      dedicated class): the model's own normalizer spec spelled out (Precompiled, Replace runs of spaces,
      Replace " " -> "▁", Replace "\\A▁" -> "▁▁"), Metaspace(always, split false), Replace/Fuse/Strip decoder.
    """
    if converter not in SENTENCEPIECE_CONVERTERS:
        raise ValueError(f"unknown converter {converter!r}; one of {SENTENCEPIECE_CONVERTERS}")
    model = sentencepiece_model(rule)
    return _cached(f"spm-unigram-{rule}-{converter}", lambda: _convert(model, converter), _sentencepiece_versions())


# ---------------------------------------------------------------------------------------------------------------


def all_builders() -> dict[str, Callable[[], Path]]:
    """Every file this module builds, by a short name (the SentencePiece ones need the optional packages)."""
    builders: dict[str, Callable[[], Path]] = {
        "bert-wordpiece-uncased": lambda: bert_wordpiece(True),
        "bert-wordpiece-cased": lambda: bert_wordpiece(False),
        "unigram-metaspace-nfkc": unigram_metaspace_nfkc,
        "bpe-nfkc-lowercase-digits": bpe_nfkc_lowercase_digits,
        "bpe-end-of-word-suffix": bpe_end_of_word_suffix,
        "bpe-continuing-subword-prefix": bpe_continuing_subword_prefix,
    }
    for rule in ("nmt_nfkc", "identity"):
        for converter in SENTENCEPIECE_CONVERTERS:
            builders[f"spm-unigram-{rule}-{converter}"] = (
                lambda rule=rule, converter=converter: sentencepiece_unigram(rule, converter)
            )
    return builders
