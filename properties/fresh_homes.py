"""Fresh `DELTA_HOME` folders for the tests that run a command on a cache of their own (a corrupt row, a single
tokenizer), without the cold start of the derived caches.

A command on a fresh home computes the reference engine's class masks (`spec.engine_classes`, about 9 s for one
tokenizer's generator tables) and each tokenizer.json's facts (`frozen.facts_cache`) again. Both caches are keyed by
what they are computed from (the regex or the file's digest, the `tokenizers` version, and for the facts the
computing code), never by the home, so a fresh home may read and add the entries of this run's own cache: the
command computes nothing differently, and what it computes is shared with the rest of the run.
"""

from __future__ import annotations

from pathlib import Path

from delta_suite.frozen.cache import cache_root, tokenizers_dir

SHARED_CACHES = ("engine-classes", "tokenizer-facts")  # content-keyed derived caches (see the module's docstring)


def share_derived_caches(home: Path) -> Path:
    """`home` (created) with each of SHARED_CACHES a link to this run's own folder of that name; `home`."""
    home.mkdir(parents=True, exist_ok=True)
    for name in SHARED_CACHES:
        shared = cache_root() / name
        shared.mkdir(parents=True, exist_ok=True)
        (home / name).symlink_to(shared, target_is_directory=True)
    return home


def home_with_rows(home: Path, names: list[str]) -> Path:
    """A home (`share_derived_caches`) where only the provisioned registry rows `names` are provisioned: each a link
    to this run's own folder of that row (its files, verified against the registry's digest when loaded)."""
    share_derived_caches(home)
    tokenizers_dir(home).mkdir()
    for name in names:
        (tokenizers_dir(home) / name).symlink_to(tokenizers_dir() / name, target_is_directory=True)
    return home
