"""Start Dask workers as SLURM jobs (dask-jobqueue) for `corpora compare --distributed`.

A documented configuration, not run by the test suite (no SLURM here). Each job needs only the installed package:
the tokenizers reach the workers from the client by digest, the corpus by URL. Usage, on a login node:

    pip install dask-jobqueue delta-suite-*.whl
    python deploy/slurm_cluster.py 32        # prints the scheduler address, keeps the cluster up
    corpora compare --corpus-dir https://HOST/corpus/full --distributed dask://ADDRESS --out out/corpus/full
"""

from __future__ import annotations

import sys
import time

from dask_jobqueue import SLURMCluster  # type: ignore[import-not-found]  # optional: only on SLURM clusters


def main(jobs: int) -> None:
    cluster = SLURMCluster(
        cores=1, processes=1, memory="6GB", walltime="04:00:00",
        # each job's worker: the project's wheel in a fresh environment, its own cache on local disk
        job_script_prologue=[
            "python -m venv $TMPDIR/delta && . $TMPDIR/delta/bin/activate",
            "pip install -q $HOME/wheels/delta_suite-*.whl",
            "export DELTA_HOME=$TMPDIR/delta-home",
        ],
        worker_extra_args=["--nthreads", "1"],
    )
    cluster.scale(jobs=jobs)
    print(f"scheduler: dask://{cluster.scheduler_address.removeprefix('tcp://')}", flush=True)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
