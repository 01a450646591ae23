"""toktier (PyPI) as a subject: its routed whole encode, its session (append) path and its certified chunked path.

toktier loads a tokenizer by family from its own artifact cache, never from a path. The suite stages its own
digest-checked files there: the server (in toktier's environment) builds a one-family manifest from the files'
digests, copies them into `toktier.artifacts.store.ArtifactStore(...).directory(family)` under a TOKTIER_HOME
kept in `$DELTA_HOME/subject-envs/toktier-home`, has toktier re-verify them, and calls
`toktier.load(family, manifest=..., device="cpu")` offline. Whether toktier then admits the content to its fast
routes or sends it to the reference is toktier's own decision, reported in `info` (plan backend, reasons,
chunked admission).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from delta_suite.frozen.registry import lookup
from delta_suite.subjects.envs import envs_root
from delta_suite.subjects.peer_client import config_file, staged_tokenizer_file
from delta_suite.subjects.pypi_peer import PeerSubject

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


class TokTierSubject(PeerSubject):
    """toktier bound to one provisioned tokenizer, loaded under the registry name as its family id."""

    peer_name = "toktier"
    offers_session = True
    offers_chunked = True

    def load_request(self, tok: FrozenTokenizer) -> dict:
        row = lookup(tok.name)
        files = {"tokenizer.json": str(staged_tokenizer_file(tok))}
        cfg = config_file(tok)
        if cfg is not None:
            files["tokenizer_config.json"] = str(cfg)
        home = envs_root() / f"toktier-home-{self.version}"
        return {
            "home": str(home),
            "staged": {"family": row.name, "repo_id": row.repo_id, "revision": row.revision, "files": files},
        }
