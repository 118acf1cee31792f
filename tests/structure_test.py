#!/usr/bin/env python3
"""The project's structure, checked in CI (ctest -R structure):

1. tools/check_layers.py passes on the tree, and fails, naming the file and line, on a copy of the
   tree with an upward include planted in runner/core (so the check cannot pass vacuously).
2. Every rule code a comment, experiment, test or document cites (S2, E3, H6, M1, ... and the
   claims C1-C18) is defined in docs/: a table row `| CODE |` of docs/semantics.md or a claim
   heading of docs/results.md.
3. Every document cited by name (a file name ending in .md) is a file of the repository.

Usage: structure_test.py SOURCE_ROOT
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1]).resolve()
failures = []


def fail(message):
    failures.append(message)
    print("FAIL", message)


def layers():
    script = ROOT / "tools/check_layers.py"
    ok = subprocess.run([sys.executable, script, ROOT], capture_output=True, text=True)
    if ok.returncode != 0:
        fail("check_layers on the tree:\n" + ok.stdout + ok.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp)
        for part in ("runner", "ops"):
            shutil.copytree(ROOT / part, copy / part)
        planted = copy / "runner/core/stats.cpp"
        lines = planted.read_text().splitlines()
        lines.insert(1, '#include "runner/report/console.hpp"')
        planted.write_text("\n".join(lines) + "\n")
        bad = subprocess.run([sys.executable, script, copy], capture_output=True, text=True)
        want = ('runner/core/stats.cpp:2: error: runner/core includes "runner/report/console.hpp" of runner/report, '
                'a layer above it')
        if bad.returncode != 1 or want not in bad.stdout:
            fail(f"check_layers did not catch the planted include (exit {bad.returncode}):\n{bad.stdout}{bad.stderr}")
        else:
            print("ok: check_layers fails on a planted upward include:", bad.stdout.splitlines()[0][:100], "...")


# The files whose text may cite rules and documents.
SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".yaml", ".md", ".py", ".sh", ".json", ".txt"}


def cited_files():
    for folder in ("runner", "ops", "tests", "bench", "experiments", "docs", "tools", "schemas", ".ci"):
        for f in sorted((ROOT / folder).rglob("*")):
            if f.is_file() and (f.suffix in SUFFIXES or f.name == "run") and "tests/fuzz/corpus" not in f.as_posix():
                yield f
    yield ROOT / "README.md"
    yield ROOT / "CMakeLists.txt"


# A rule code: a prefix letter and a number, not part of a longer word (H200, sm_90, x86).
CODE = re.compile(r"(?<![A-Za-z0-9_./-])([SEHIAGLMC][0-9]{1,2})(?![0-9A-Za-z_])")
NOT_RULES = [
    re.compile(r"control characters|U\+00[89]"),  # Unicode's C1 controls (U+0080-U+009F)
    re.compile(r"\bL[12] cache"),
]
DOCUMENT = re.compile(r"([A-Za-z0-9_./-]+\.md)\b")


def defined_codes():
    codes = set()
    for line in (ROOT / "docs/semantics.md").read_text().splitlines():
        if m := re.match(r"^\| ([A-Z]+[0-9]+) \|", line):
            codes.add(m.group(1))
    for line in (ROOT / "docs/results.md").read_text().splitlines():
        if m := re.match(r"^#+ (C[0-9]+)\b", line):
            codes.add(m.group(1))
    return codes


def documents_in_repository():
    return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.md")
            if not p.relative_to(ROOT).parts[0].startswith((".git", "build"))}


def resolves(cited, in_file, known):
    """A path from the source root or from the citing file's folder, or a bare file name."""
    for base in (ROOT, in_file.parent):
        path = (base / cited).resolve()
        if path.is_relative_to(ROOT) and path.relative_to(ROOT).as_posix() in known:
            return True
    return "/" not in cited and any(k.rsplit("/", 1)[-1] == cited for k in known)


def citations():
    """Every rule code and document cited, in one pass over the files."""
    codes, known = defined_codes(), documents_in_repository()
    if len(codes) < 30:
        fail(f"docs define only {len(codes)} rule codes: {sorted(codes)}")
    rules = documents = 0
    for f in cited_files():
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            where = f"{f.relative_to(ROOT)}:{n}"
            if not any(p.search(line) for p in NOT_RULES):
                for m in CODE.finditer(line):
                    rules += 1
                    if m.group(1) not in codes:
                        fail(f"{where}: cites {m.group(1)}, which no document in docs/ defines: {line.strip()[:120]}")
            for m in DOCUMENT.finditer(line):
                documents += 1
                if not resolves(m.group(1), f, known):
                    fail(f"{where}: cites {m.group(1)}, which is not in the repository")
    print(f"ok: {rules} rule-code citations checked against {len(codes)} codes defined in docs/")
    print(f"ok: {documents} document citations resolve")


layers()
citations()
if failures:
    print(f"structure: {len(failures)} failure(s)")
    sys.exit(1)
print("structure: all checks passed")
