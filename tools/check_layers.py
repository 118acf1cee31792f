#!/usr/bin/env python3
"""Checks that streamlab's layers only look down.

The layers, lowest first (README "Layout"):
  runner/core     the IR, source locations, diagnostics, expressions, records, errors
  runner/context  what an op is handed: the YAML reader, happens-before, host and CUDA state,
                  libraries, the device timer
  ops             the op table and every op kind (ops/kernels: the built-in kernels)
  runner/check    checks, expectations and figures: tables like the op table, read at load
  runner/load     reading an experiment file into the IR
  runner/analyze  the static race and pitfall analyzer
  runner/predict  the timeline model: dependencies, simulation, explanations, device profiles
  runner/execute  the backends, the start gate, a run's repetitions
  runner/report   console, JSON, CSV, trace and HTML reports; output files
  runner/cli      the command line
A file may include headers of its own layer and of the layers below it, never above. Every
quoted include must name a file of the project. Exit 0 when all hold, 1 with one
`file:line: error: ...` per violation.

Usage: check_layers.py [SOURCE_ROOT]   (default: the folder above this script's)
"""
import pathlib
import re
import sys

LAYERS = ["runner/core", "runner/context", "ops", "runner/check", "runner/load", "runner/analyze",
          "runner/predict", "runner/execute", "runner/report", "runner/cli"]
SOURCES = (".hpp", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path: str):
    """The index of the layer a project path belongs to, or None when it is in none."""
    for i, layer in enumerate(LAYERS):
        if path == layer or path.startswith(layer + "/"):
            return i
    return None


def check(root: pathlib.Path):
    errors = []
    for folder in ("runner", "ops"):
        for f in sorted((root / folder).rglob("*")):
            if f.suffix not in SOURCES or not f.is_file():
                continue
            rel = f.relative_to(root).as_posix()
            mine = layer_of(rel)
            if mine is None:
                errors.append(f"{rel}:1: error: not in a layer: put it under one of {', '.join(LAYERS)}")
                continue
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if not (root / target).is_file():
                    errors.append(f"{rel}:{n}: error: includes \"{target}\", which is not a file of the project "
                                  "(includes are written from the source root)")
                    continue
                theirs = layer_of(target)
                if theirs is None:
                    continue  # tests, bench: never included from the layers (they are above them)
                if theirs > mine:
                    errors.append(f"{rel}:{n}: error: {LAYERS[mine]} includes \"{target}\" of {LAYERS[theirs]}, "
                                  f"a layer above it; the layers only look down: {' < '.join(LAYERS)}")
    return errors


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} include(s) break the layering", file=sys.stderr)
        return 1
    print(f"check_layers: every include of runner/ and ops/ looks down ({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
