"""Commands run where the kernel itself refuses writes, even for root (the tests run as root,
and root writes through any file mode).

- `unprivileged()`: the prefix that runs a command as root without CAP_DAC_OVERRIDE and
  CAP_DAC_READ_SEARCH (util-linux `setpriv`), so that file modes bind root as they bind the
  file's owner: a 0444 file cannot be written, a 0555 folder takes no new file. An empty prefix
  when the tests do not run as root (modes bind anyway); None where it cannot be had.
- `in_mount_namespace(setup, script)`: a Python script run in a private mount namespace after
  shell `setup` (a read-only bind mount, a tiny tmpfs that fills up), so the file system itself
  answers EROFS or ENOSPC; None where mounting is not allowed. Nothing is mounted outside it.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.conftest import REPO

SETUP_FAILED = 97


@functools.cache
def unprivileged() -> tuple[str, ...] | None:
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    with tempfile.TemporaryDirectory() as folder:
        locked = Path(folder) / "locked"
        locked.write_text("x")
        locked.chmod(0o444)
        tried = subprocess.run([*prefix, sys.executable, "-c", f"open({str(locked)!r}, 'a')"], capture_output=True)
    return prefix if tried.returncode != 0 else None  # the write must really be refused


def run_cli_unprivileged(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    prefix = unprivileged()
    assert prefix is not None
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PROBE_MODELS"):
        environment.pop(name, None)
    return subprocess.run([*prefix, sys.executable, "-m", "probes", *args], cwd=REPO, env=environment,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def in_mount_namespace(setup: str, script: str, env: dict[str, str] | None = None) -> Any | None:
    """Run `setup` (shell) then `script` (Python, printing JSON on its last line) in a private
    mount namespace; the JSON, or None when the namespace or the mounts are not allowed here."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return None
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run(
        [unshare, "--mount", "--propagation", "private", "sh", "-c",
         f'({setup}) >/dev/null 2>&1 || exit {SETUP_FAILED}; exec "$0" -c "$1"', sys.executable, script],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode == SETUP_FAILED or (done.returncode != 0 and "unshare" in done.stderr):
        return None
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# The script `in_mount_namespace` runs to call the command line several times: each call's exit
# status, output and error output, as a JSON list.
CLI_CALLS = """
import json, subprocess, sys
calls = json.loads(sys.argv[1] if len(sys.argv) > 1 else {calls!r})
out = []
for args in calls:
    done = subprocess.run([sys.executable, "-m", "probes", *args], capture_output=True, text=True, timeout=300)
    out.append({{"rc": done.returncode, "out": done.stdout, "err": done.stderr}})
print(json.dumps(out))
"""


def cli_calls(*calls: list[str]) -> str:
    return CLI_CALLS.format(calls=json.dumps(list(calls)))
