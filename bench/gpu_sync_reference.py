#!/usr/bin/env python3
"""Independent re-implementation of vLLM's `tools/pre_commit/check_gpu_sync_patterns.py`
detection logic (pageable `non_blocking` host->device copies), for building H2D003 ground
truth. Written from reading the script; no code copied.

Versions read (via the code-search index, repo vllm-project/vllm):
  * commit dd0ae7f777fe2a6847277aeea333e9e555459e78 -- the base script (PR #56202):
    inline shapes only.
  * commit 4a4c7c4b41e7643fd3e25035234d22ca3a265c0f -- with the per-function tainted-name
    tracking (PR #56203).  THIS is the behaviour reproduced here.
  * its test file (tests/.../test_check_gpu_sync_patterns-style, loaded from
    tools/pre_commit/check_gpu_sync_patterns.py) was also read to confirm the cases.

Behaviour reproduced (details that differ from / refine the short summary in issue 11):
  * A "unpinned construction" is a call `torch.<f>(...)` where the callee is literally the
    attribute of the bare name `torch` (no aliases, no `from torch import zeros`):
      - f == from_numpy: always unpinned;
      - f in {tensor, zeros, empty, ones, full, arange}: unpinned unless a `pin_memory=`
        keyword is "truthy" -- a constant is judged by bool(value) (so pin_memory=None /
        False / 0 are NOT truthy), ANY non-constant expression counts as truthy; and unless
        a `device=` keyword is present whose value is anything other than the exact string
        constant "cpu" (case-sensitive; `device=torch.device("cpu")`, `device="cpu:0"`,
        `device=dev` all count as "on a non-CPU device" -> not flagged). Positional device
        arguments are not looked at. `as_tensor`, `*_like`, `eye`, `linspace`, `randn`, ...
        are not constructions for the script.
  * `non_blocking` must be a keyword whose value is a constant equal to True
    (`non_blocking=True`, also `=1`); a variable/expression never triggers.
  * `.to(...)` / `.cuda(...)` (attribute call, any receiver): `.cuda` always targets the
    device; for `.to` the `device=` keyword wins if present, else the first positional
    argument; the target is "CPU" only if it is a string constant whose lower() == "cpu";
    anything else (names, dtypes, torch.device("cpu") calls, other tensors) counts as a
    device target; `.to(non_blocking=True)` with neither device kw nor positional -> no flag.
    The *receiver* (`x` in `x.to(...)`) must be an inline unpinned construction or a bare
    local name currently tainted.
  * `.copy_(src, non_blocking=True)`: only the first POSITIONAL argument is the source
    (`copy_(src=..., ...)` is not looked at); same source test. Destination not examined.
  * Taint tracking: a stack of scopes; the module body is the bottom scope (module-level
    code and class bodies share it; class bodies do not push a scope). FunctionDef,
    AsyncFunctionDef and Lambda push a fresh empty scope (no inheritance from the enclosing
    function). `Assign` / `AnnAssign`-with-value: the value is visited first (so a call on
    the RHS sees the old taint), then every bare-Name target is tainted if the RHS is an
    unpinned construction, otherwise untainted; Tuple/List targets untaint their bare-Name
    elements (Starred elements untouched); attribute/subscript targets ignored. AugAssign
    leaves taint alone. Other bindings (for-targets, with-as, walrus, imports, del, function
    params) neither taint nor clear. Flow-insensitive apart from source order (taint from an
    `if` branch persists after it). Views (`t[:n]`) of a tainted name are not tainted.
  * Suppression: the substring `gpu-sync-ok` anywhere on any physical line from the call's
    lineno to its end_lineno (whole span of the `.to/.cuda/.copy_` call node, which starts at
    the start of the receiver expression).
  * Reported line = the call node's lineno (start of the receiver expression for
    `.to/.cuda`, i.e. of `dst` for `dst.copy_(...)`). Nested calls are visited too.
  * Files that fail to parse are skipped silently.

Not determined from the material read:
  * Which files vLLM's pre-commit hook passes to the script (the .pre-commit-config.yaml
    entry was not found in the index); this CLI scans every *.py below ROOT (optionally
    excluding tests with --exclude-tests: any path component `tests`/`test` or file name
    `test_*.py` / `*_test.py`).
  * How the real script behaves on undecodable files (it would raise); here they are
    skipped with a note on stderr.
  * Messages are paraphrased, not the script's wording; colours dropped.

CLI:  reference_script.py [--exclude-tests] ROOT   ->  prints `relpath:line: message`
"""

from __future__ import annotations

import ast
import os
import sys

ALWAYS_UNPINNED = {"from_numpy"}
UNPINNED_UNLESS_PINNED = {"tensor", "zeros", "empty", "ones", "full", "arange"}
PRAGMA = "gpu-sync-ok"


def torch_factory_name(node):
    """Return f for a call `torch.f(...)` (bare name torch), else None."""
    if not isinstance(node, ast.Call):
        return None
    fn = node.func
    if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "torch":
        return fn.attr
    return None


def keyword(call, name):
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def pin_kwarg_truthy(call):
    kw = keyword(call, "pin_memory")
    if kw is None:
        return False
    if isinstance(kw.value, ast.Constant):
        return bool(kw.value.value)
    return True  # any name / expression is taken as opt-in


def non_blocking_true(call):
    for kw in call.keywords:
        if kw.arg == "non_blocking" and isinstance(kw.value, ast.Constant):
            return kw.value.value == True  # noqa: E712  (1 == True as well)
    return False


def is_unpinned_construction(node):
    name = torch_factory_name(node)
    if name is None:
        return False
    if name in ALWAYS_UNPINNED:
        return True
    if name not in UNPINNED_UNLESS_PINNED:
        return False
    if pin_kwarg_truthy(node):
        return False
    dev = keyword(node, "device")
    if dev is not None:
        v = dev.value
        return isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value == "cpu"
    return True


def is_cpu_literal(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "cpu"


def moves_to_device(call):
    if call.func.attr == "cuda":
        return True
    dev = keyword(call, "device")
    if dev is not None:
        return not is_cpu_literal(dev.value)
    if call.args:
        return not is_cpu_literal(call.args[0])
    return False


class Checker(ast.NodeVisitor):
    def __init__(self, lines):
        self.lines = lines
        self.scopes = [{}]
        self.found = []  # (line, message)

    # scopes --------------------------------------------------------------
    def _scoped(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_Lambda = _scoped

    @property
    def taint(self):
        return self.scopes[-1]

    def _bind(self, target, tainted, line):
        if isinstance(target, ast.Name):
            if tainted:
                self.taint[target.id] = line
            else:
                self.taint.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                if isinstance(e, ast.Name):
                    self.taint.pop(e.id, None)

    def visit_Assign(self, node):
        self.generic_visit(node)
        t = is_unpinned_construction(node.value)
        for tgt in node.targets:
            self._bind(tgt, t, node.lineno)

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if node.value is not None:
            self._bind(node.target, is_unpinned_construction(node.value), node.lineno)

    # checks --------------------------------------------------------------
    def _unpinned_source(self, expr):
        return is_unpinned_construction(expr) or (isinstance(expr, ast.Name) and expr.id in self.taint)

    def _suppressed(self, call):
        end = getattr(call, "end_lineno", None) or call.lineno
        for ln in range(call.lineno, end + 1):
            if 1 <= ln <= len(self.lines) and PRAGMA in self.lines[ln - 1]:
                return True
        return False

    def _origin(self, expr):
        if isinstance(expr, ast.Name) and expr.id in self.taint:
            return f" (bound at line {self.taint[expr.id]})"
        return " (constructed inline)"

    def visit_Call(self, node):
        fn = node.func
        if isinstance(fn, ast.Attribute) and non_blocking_true(node):
            if fn.attr in ("to", "cuda"):
                if moves_to_device(node) and self._unpinned_source(fn.value) and not self._suppressed(node):
                    self.found.append((node.lineno, f"unpinned CPU tensor{self._origin(fn.value)} moved with "
                                       f".{fn.attr}(..., non_blocking=True): pageable copy, the host blocks"))
            elif fn.attr == "copy_" and node.args:
                src = node.args[0]
                if self._unpinned_source(src) and not self._suppressed(node):
                    self.found.append((node.lineno, f"unpinned CPU source{self._origin(src)} in "
                                       ".copy_(..., non_blocking=True): pageable copy, the host blocks"))
        self.generic_visit(node)


def is_test_path(rel):
    parts = rel.replace(os.sep, "/").split("/")
    base = parts[-1]
    return (any(p in ("tests", "test") for p in parts[:-1])
            or base.startswith("test_") or base.endswith("_test.py"))


def scan_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            src = f.read()
    except UnicodeDecodeError:
        print(f"note: skipped undecodable {path}", file=sys.stderr)
        return []
    try:
        tree = ast.parse(src, filename=path)
    except (SyntaxError, ValueError):
        return []
    c = Checker(src.splitlines())
    c.visit(tree)
    return c.found


def main(argv):
    exclude_tests = "--exclude-tests" in argv
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    root = args[0]
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, root)
            if exclude_tests and is_test_path(rel):
                continue
            for line, msg in scan_file(full):
                print(f"{rel}:{line}: {msg}")
                n += 1
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
