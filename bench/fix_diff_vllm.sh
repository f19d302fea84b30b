#!/bin/bash
# Issue 14 acceptance on vLLM 0.33.0: the whole-tree `check --fix --unsafe-fixes` diff (insertions,
# files, parses, idempotent, flashmla gates, ruff format kept). The tree comes from the pinned wheel
# that tests/corpus.py extracts into ~/.cache/lint-h2d/vllm-0.33.0 (run tests/test_vllm.py once).
# Usage: PYTHONPATH=<checkout> bash bench/fix_diff_vllm.sh
set -e
SRC=~/.cache/lint-h2d/vllm-0.33.0
W=$(mktemp -d); D=$W/vllm-tree
mkdir -p $D; cp -r $SRC/vllm $D/; cd $D
printf '[project]\nname = "vllm-bench"\n' > pyproject.toml
git init -q; git add -A; git -c user.email=a@b -c user.name=x commit -qm base
python -m lint_h2d check --fix --unsafe-fixes --no-cache vllm > $W/fix1.txt 2>&1 || true
tail -3 $W/fix1.txt
echo "diff --stat: $(git diff --stat | tail -1)"
echo "diff -w: $(git diff -w --stat | tail -1)"
git diff > $W/whole.diff
git diff vllm/v1/attention/backends/mla/flashmla.py > $W/flashmla.diff
git diff vllm/v1/worker/mamba_utils.py > $W/mamba_utils.diff
echo "flashmla gates: $(grep -c '^+.*if current_platform.is_rocm()' $W/flashmla.diff || true)"
echo "mamba_utils diff lines: $(wc -l < $W/mamba_utils.diff)"
python - <<'PY'
import ast, subprocess
changed = subprocess.run(["git", "diff", "--name-only"], capture_output=True, text=True).stdout.split()
def fmt_ok(text, name):
    r = subprocess.run(["ruff", "format", "--check", "--isolated", "--stdin-filename", name, "-"], input=text, capture_output=True, text=True)
    return r.returncode == 0
before_ok = after_ok = broke = 0
for f in changed:
    old = subprocess.run(["git", "show", f"HEAD:{f}"], capture_output=True, text=True).stdout
    new = open(f).read()
    ast.parse(new)
    b, a = fmt_ok(old, f), fmt_ok(new, f)
    before_ok += b; after_ok += b and a
    if b and not a: print("ruff format broke:", f)
print(f"changed files parse: {len(changed)}; ruff format passed before: {before_ok}; of those still pass: {after_ok}")
PY
python -m lint_h2d check --fix --unsafe-fixes --no-cache vllm > $W/fix2.txt 2>&1 || true
git diff > $W/whole2.diff
cmp -s $W/whole.diff $W/whole2.diff && echo "idempotent: second run changed nothing" || echo "NOT idempotent"
echo "outputs in $W"
