"""Headless Chromium, driven from the command line only (no network, no extra packages)."""
from __future__ import annotations

import os
import shutil
import subprocess

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars", "--mute-audio"]
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find() -> str | None:
    """The Chromium binary: $THEORY_CHROMIUM, else the first of CANDIDATES on PATH."""
    env = os.environ.get("THEORY_CHROMIUM")
    if env:
        return env if os.path.exists(env) else None
    for name in CANDIDATES:
        p = shutil.which(name)
        if p:
            return p
    return None


def run(binary: str, profile_dir, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    cmd = [binary, *FLAGS, f"--user-data-dir={profile_dir}", "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
