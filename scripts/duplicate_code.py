"""Report the runtime's duplicated code and fail when it grows.

A duplicate is what pylint's `duplicate-code` check (R0801) finds, with pylint's own defaults: a run
of 4 or more lines that stands the same in two or more places, comments, docstrings, imports and
function signatures left out. pylint's `symilar` does the finding; this script counts its blocks
over the hand-written runtime (`runtime/mcp_bindings/runtime`), lists them, and compares the count
with the ceiling in `scripts/duplicate_code.ceiling`.

The count may only go down: above the ceiling fails; below it passes and says to lower the ceiling
to today's count in the same change, so that the next change cannot spend what this one saved.

    python scripts/duplicate_code.py [--ceiling FILE]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNTIME = REPO / "runtime" / "mcp_bindings" / "runtime"
MIN_LINES = 4  # pylint's min-similarity-lines default
_BLOCK = re.compile(r"^(\d+) similar lines in (\d+) files$")
_PLACE = re.compile(r"^==(.+):\[(\d+):(\d+)\]$")


def blocks(files: list[Path]) -> list[tuple[int, list[str]]]:
    """(lines, places) of each duplicated block `symilar` finds in `files`."""
    symilar = shutil.which("symilar", path=str(Path(sys.executable).parent)) or shutil.which("symilar")
    if symilar is None:
        sys.exit("duplicate_code: pylint's `symilar` is not installed (the `test` extra has pylint)")
    argv = [symilar, "-d", str(MIN_LINES), "-i", "--ignore-docstrings", "--ignore-imports", "--ignore-signatures"]
    done = subprocess.run([*argv, *map(str, files)], capture_output=True, text=True, cwd=REPO, check=False)
    found: list[tuple[int, list[str]]] = []
    for line in done.stdout.splitlines():
        if block := _BLOCK.match(line.strip()):
            found.append((int(block.group(1)), []))
        elif (place := _PLACE.match(line.strip())) and found:
            path = Path(place.group(1)).resolve().relative_to(RUNTIME)
            found[-1][1].append(f"{path}:{int(place.group(2)) + 1}-{place.group(3)}")
    if done.returncode not in (0, 1) or (not found and "TOTAL lines=" not in done.stdout):
        sys.exit(f"duplicate_code: symilar failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ceiling", type=Path, default=REPO / "scripts" / "duplicate_code.ceiling")
    args = parser.parse_args()
    ceiling = int(next(line for line in args.ceiling.read_text().splitlines() if line and not line.startswith("#")))
    found = blocks(sorted(RUNTIME.rglob("*.py")))
    for lines, places in found:
        print(f"  {lines} lines: {' ~ '.join(places)}")
    print(f"runtime duplicate blocks (pylint symilar, {MIN_LINES}+ lines): {len(found)} (ceiling {ceiling})")
    if len(found) > ceiling:
        print(f"duplicate_code: {len(found)} blocks, more than the ceiling {ceiling}: share the code instead")
        return 1
    if len(found) < ceiling:
        print(f"duplicate_code: fewer than the ceiling; lower it to {len(found)} in {args.ceiling.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
