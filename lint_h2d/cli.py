"""Command line, shaped like ruff's: arguments → engine → reporter; exit codes 0/1/2.

0: no findings (or --exit-zero); 1: findings remain (or --diff would change something);
2: usage or configuration error, or a file that could not be checked.
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, NoReturn, Optional, Sequence, TextIO

from lint_h2d import __version__
from lint_h2d.cache import DEFAULT_DIR, Cache
from lint_h2d.config import ConfigError, Settings, cli_overrides, resolve
from lint_h2d.discovery import discover
from lint_h2d.engine import (
    ERROR_CODES,
    IO_ERROR,
    Engine,
    Source,
    WriteError,
    analyze_many,
    default_jobs,
    error_finding,
    load_sources,
    project_facts,
    write_atomic,
)
from lint_h2d.findings import Applicability, Finding
from lint_h2d.inference.project import ProjectFacts
from lint_h2d.project_index import project_index
from lint_h2d.report import FORMATS, ReportContext
from lint_h2d.rules import all_rules

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"lint-h2d: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _codes(text: str) -> List[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lint-h2d", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"lint-h2d {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def add_check_options(p: argparse.ArgumentParser, fix_default: bool) -> None:
        p.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
        p.add_argument("--fix", action="store_true", default=fix_default, help="apply safe fixes")
        p.add_argument("--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes")
        p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
        p.add_argument("--show-fixes", action="store_true", help="list the fixes that were applied")
        p.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 if any file was fixed")
        p.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (e.g. H2D001)")
        p.add_argument("--extend-select", type=_codes, help="add to the selected rules")
        p.add_argument("--ignore", type=_codes, help="rule codes or prefixes to disable")
        p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
        p.add_argument("--output-format", choices=sorted(FORMATS), default="full")
        p.add_argument("--statistics", action="store_true", help="count findings per rule")
        p.add_argument("--config", help="a pyproject.toml or lint-h2d.toml to read settings from")
        p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
        p.add_argument("--cache-dir", help=f"cache folder (default: {DEFAULT_DIR} in the project root)")
        p.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: cores)")
        p.add_argument("--no-prefilter", action="store_true", help=argparse.SUPPRESS)
        p.add_argument("--force-exclude", action="store_true",
                       help="apply excludes to files named on the command line (for pre-commit)")
        p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
        p.add_argument("--stdin-filename", metavar="PATH",
                       help="with `-` as the path: the name of the code read from stdin (config, "
                            "per-file-ignores, fix gate and report use it)")

    check = sub.add_parser("check", help="find problems (and fix them with --fix)")
    add_check_options(check, fix_default=False)
    fix = sub.add_parser("fix", help="same as `check --fix`")
    add_check_options(fix, fix_default=True)

    rule = sub.add_parser("rule", help="explain a rule")
    rule.add_argument("code", nargs="?", help="rule code, e.g. H2D001")
    rule.add_argument("--all", action="store_true", help="list every rule")

    verify = sub.add_parser("verify", help="run each fix (or the built-in matrix) against the original (needs torch)")
    from lint_h2d.verify import add_arguments as add_verify_arguments

    add_verify_arguments(verify)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if args.command == "rule":
        return run_rule(args, sys.stdout)
    if args.command == "verify":
        return run_verify(args, sys.stdout, sys.stderr)
    try:
        if "-" in args.paths:
            return run_stdin(args, sys.stdin, sys.stdout, sys.stderr)
        return run_check(args, sys.stdout, sys.stderr)
    except ConfigError as exc:
        sys.stderr.write(f"lint-h2d: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("lint-h2d: interrupted\n")
        return 130


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`lint-h2d verify`: imported lazily, so the linter itself never needs torch."""
    from lint_h2d.verify import run_verify as verify

    try:
        return verify(args, out, err)
    except ConfigError as exc:
        err.write(f"lint-h2d: error: {exc}\n")
        return EXIT_ERROR


def run_rule(args: argparse.Namespace, out: TextIO) -> int:
    rules = all_rules()
    if args.all or not args.code:
        for r in rules:
            out.write(f"{r.code}  {r.name}  {r.summary}\n")
        return EXIT_OK
    for r in rules:
        if r.code == args.code.upper():
            out.write(r.doc.render(r.code, r.name))
            return EXIT_OK
    sys.stderr.write(f"lint-h2d: error: unknown rule {args.code!r} (see `lint-h2d rule --all`)\n")
    return EXIT_ERROR


def _settings(args: argparse.Namespace) -> Settings:
    stdin_name = getattr(args, "stdin_filename", None)
    settings = resolve([stdin_name] if stdin_name and "-" in args.paths else args.paths, args.config)
    settings = cli_overrides(settings, args.select, args.ignore, args.extend_select)
    if getattr(args, "force_exclude", False):
        settings = dataclasses.replace(settings, force_exclude=True)
    return settings


def _cache_folder(args: argparse.Namespace, settings: Settings) -> Optional[Path]:
    if args.no_cache:
        return None
    folder = Path(args.cache_dir or settings.cache_dir or (settings.root / DEFAULT_DIR))
    return folder if folder.is_absolute() else settings.root / folder


def _cache(args: argparse.Namespace, settings: Settings, engine: Engine) -> Optional[Cache]:
    folder = _cache_folder(args, settings)
    if folder is None or args.fix or args.diff or args.no_prefilter:
        return None
    return Cache(folder, settings.fingerprint() + "|" + engine.project.fingerprint)


def _project_facts(args: argparse.Namespace, settings: Settings, sources: Sequence[Source],
                   paths: Sequence[str]) -> ProjectFacts:
    """The checked files' own facts plus the project's (so one-file runs agree with scans)."""
    walk = any(os.path.isdir(p) for p in args.paths if p != "-")
    classes, summaries = project_index(settings, paths, _cache_folder(args, settings), walk)
    return project_facts(sources, classes, summaries)


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    files, problems = discover(args.paths, settings)
    sources, errors = load_sources(files)
    errors += [error_finding(IO_ERROR, p.path, f"cannot check {p.path}: {p.message}") for p in problems]
    engine = Engine(settings, _project_facts(args, settings, sources, [s.path for s in sources]),
                    use_prefilter=not args.no_prefilter)
    jobs = args.jobs if args.jobs > 0 else default_jobs()
    cache = _cache(args, settings, engine)
    from lint_h2d.report.progress import for_stream

    progress = for_stream(err)
    try:
        results = analyze_many(engine, sources, jobs, cache, progress=progress)
    finally:
        if progress is not None:
            progress.close()
    if cache is not None:
        cache.save()

    fixed: Dict[str, int] = {}
    applied: List[Finding] = []
    diffs: List[str] = []
    texts: Dict[str, str] = {s.path: s.text for s in sources}
    if args.fix or args.diff:
        by_path = {s.path: s for s in sources}
        for path, findings in list(results.items()):
            if not any(f.fix_applies(args.unsafe_fixes) for f in findings):
                continue
            source = by_path[path]
            new_text, done, remaining = engine.fix_text(path, source.text, args.unsafe_fixes)
            results[path] = remaining
            if new_text == source.text:
                continue
            if args.diff:
                diffs.append(_unified_diff(path, source.text, new_text))
                results[path] = findings  # nothing was written: the findings stand
                fixed[path] = len(done)
                continue
            try:
                write_atomic(source, new_text)
            except WriteError as exc:
                errors.append(error_finding(IO_ERROR, path, f"cannot fix {path}: {exc}"))
                results[path] = findings
                continue
            fixed[path] = len(done)
            applied.extend(done)
            texts[path] = new_text

    findings = sorted([f for fs in results.values() for f in fs] + errors, key=Finding.sort_key)
    if args.diff:
        out.write("".join(diffs))
        if not args.quiet:
            err.write(_would_fix(sum(fixed.values())))
        failures = [f for f in findings if f.code in ERROR_CODES]
        if failures:
            _render(failures, args, texts, out)
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs else EXIT_OK

    return _report(findings, args, texts, sum(fixed.values()), out, applied)


def run_stdin(args: argparse.Namespace, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """`check - --stdin-filename PATH`: the code comes from stdin and PATH names it.

    The report goes to stdout; with --fix stdout gets the fixed source and nothing else (the
    remaining findings go to stderr), with --diff it gets the diff. Exit codes as for files.
    """
    from lint_h2d.engine import SourceError, decode

    if args.paths != ["-"]:
        err.write("lint-h2d: error: `-` (read stdin) cannot be combined with other paths\n")
        return EXIT_ERROR
    path = args.stdin_filename or "-"
    buffer = getattr(stdin, "buffer", None)
    raw = buffer.read() if buffer is not None else stdin.read().encode("utf-8")
    settings = _settings(args)

    def write_source(data: bytes) -> None:
        target = getattr(out, "buffer", None)
        if target is None:
            out.write(data.decode("utf-8", "replace"))
        else:
            out.flush()
            target.write(data)
            target.flush()

    try:
        source = decode(path, raw)
    except SourceError as exc:
        if args.fix and not args.diff:
            write_source(raw)  # an editor piping its buffer through must get it back intact
        report = err if args.fix and not args.diff else out
        _render([error_finding(IO_ERROR, path, f"cannot check {path}: {exc}")], args, {}, report)
        return EXIT_ERROR
    engine = Engine(settings, _project_facts(args, settings, [source], [path]),
                    use_prefilter=not args.no_prefilter)
    findings = engine.analyze(path, source.text)
    texts = {path: source.text}
    fixed = 0
    report = out
    if args.fix or args.diff:
        new_text, done, remaining = engine.fix_text(path, source.text, args.unsafe_fixes)
        if args.diff:
            if new_text != source.text:
                out.write(_unified_diff(path, source.text, new_text))
            failures = [f for f in findings if f.code in ERROR_CODES]
            if not args.quiet:
                err.write(_would_fix(len(done)))
            if failures:
                _render(failures, args, texts, err)
                return EXIT_ERROR
            return EXIT_FINDINGS if new_text != source.text else EXIT_OK
        write_source(source.encode(new_text) if new_text != source.text else raw)
        findings, fixed, report = remaining, len(done), err
        texts[path] = new_text
    return _report(sorted(findings, key=Finding.sort_key), args, texts, fixed, report)


def _report(findings: Sequence[Finding], args: argparse.Namespace, texts: Dict[str, str],
            fixed: int, out: TextIO, applied: Sequence[Finding] = ()) -> int:
    """Findings (or their statistics), the fixes applied, the summary; returns the exit code."""
    problems = [f for f in findings if f.code not in ERROR_CODES]
    failures = [f for f in findings if f.code in ERROR_CODES]
    if args.statistics:
        _statistics(findings, out)
    else:
        _render(findings, args, texts, out)
    if args.show_fixes and applied:
        out.write("\nFixed:\n")
        for f in sorted(applied, key=Finding.sort_key):
            out.write(f"  {f.path}:{f.location.row}: {f.code} {f.fix.message if f.fix else ''}\n")
    if not args.quiet and args.output_format in ("full", "concise"):
        _summary(problems, failures, fixed, args, out)
    return _exit_code(problems, failures, bool(fixed), args)


def _would_fix(count: int) -> str:
    return f"Would fix {count} error{'s' if count != 1 else ''}.\n" if count else "No errors would be fixed.\n"


def _exit_code(problems: Sequence[Finding], failures: Sequence[Finding], fixed: bool,
               args: argparse.Namespace) -> int:
    if failures:
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and fixed:
        return EXIT_FINDINGS
    if problems and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _render(findings: Sequence[Finding], args: argparse.Namespace, texts: Dict[str, str], out: TextIO) -> None:
    ctx = ReportContext(texts, show_fix_hints=True, unsafe_fixes=args.unsafe_fixes)
    out.write(FORMATS[args.output_format](findings, ctx))


def _statistics(findings: Sequence[Finding], out: TextIO) -> None:
    names = {r.code: r.name for r in all_rules()}
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix is not None)
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "[*]" if fixable[code] == count else ("[-]" if fixable[code] else "   ")
        out.write(f"{count:>5}\t{code}\t{mark} {names.get(code, 'error')}\n")


def _summary(problems: Sequence[Finding], failures: Sequence[Finding], fixed: int,
             args: argparse.Namespace, out: TextIO) -> None:
    total = len(problems) + len(failures)
    if fixed:
        out.write(f"Found {total + fixed} error{'s' if total + fixed != 1 else ''} ({fixed} fixed, {total} remaining).\n")
    elif total:
        out.write(f"Found {total} error{'s' if total != 1 else ''}.\n")
    else:
        out.write("All checks passed!\n")
    safe = sum(1 for f in problems if f.fix is not None and f.fix.applicability == Applicability.SAFE)
    unsafe = sum(1 for f in problems if f.fix is not None and f.fix.applicability == Applicability.UNSAFE)
    if safe and not args.fix:
        out.write(f"[*] {safe} fixable with the `--fix` option")
        out.write(f" ({unsafe} hidden fixes can be enabled with the `--unsafe-fixes` option).\n" if unsafe and not args.unsafe_fixes else ".\n")
    elif unsafe and not args.unsafe_fixes:
        out.write(f"No fixes available ({unsafe} hidden fixes can be enabled with the `--unsafe-fixes` option).\n")


def _unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=path, tofile=path,
    )
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
