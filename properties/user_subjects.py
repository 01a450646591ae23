"""User subjects the tests certify through `--subject module:factory`, written as a user would write them: each
factory takes (tokenizer_files, config), plain data, and knows nothing of the suite.

- `reference_wrapper`: the reference `tokenizers` library itself, whole encode, session and chunked encode (clean);
- `tab_expanding`: a front end that expands tabs to four spaces before encoding, wrong exactly on texts with a tab;
- `faulty`: raises on texts holding "é", never returns on texts holding U+200D (ZWJ), and answers token strings
  instead of IDs on texts holding "ß".
"""

from __future__ import annotations

import time

import tokenizers


class _Wrapper:
    name = "hf-wrapper"
    version = tokenizers.__version__

    def __init__(self, files: dict, config: dict) -> None:
        self.tok = tokenizers.Tokenizer.from_file(files["tokenizer_json"])
        self.row = config

    def _ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode(self, text: str) -> list[int]:
        return self._ids(text)

    def session(self):
        return _Session(self)

    def encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        return self._ids(text)


class _Session:
    def __init__(self, owner: _Wrapper) -> None:
        self.owner = owner

    def encode(self, text: str) -> list[int]:
        return self.owner.encode(text)


def reference_wrapper(files: dict, config: dict) -> _Wrapper:
    return _Wrapper(files, config)


class _TabExpanding(_Wrapper):
    name = "tab-expander"

    def _ids(self, text: str) -> list[int]:
        return super()._ids(text.replace("\t", "    "))


def tab_expanding(files: dict, config: dict) -> _Wrapper:
    return _TabExpanding(files, config)


class _Faulty(_Wrapper):
    name = "faulty"

    def _ids(self, text: str):
        if "\u00e9" in text:
            raise ValueError("accented letters are not supported")
        if "\u200d" in text:
            time.sleep(3600)
        if "\u00df" in text:
            return [str(i) for i in super()._ids(text)]
        return super()._ids(text)


def faulty(files: dict, config: dict) -> _Wrapper:
    return _Faulty(files, config)


def broken_import():  # pragma: no cover - referenced by name only, to test an import that fails
    raise AssertionError
