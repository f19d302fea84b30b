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
from typing import Dict, List, NoReturn, Optional, Sequence, TextIO, Tuple, Union

from fixers.edits import split_lines
from lint_h2d import __version__
from lint_h2d.trace import span
from lint_h2d.cache import DEFAULT_DIR
from lint_h2d.config import ConfigError, Resolver, Settings, cli_overrides
from lint_h2d.discovery import discover, glob_warnings
from lint_h2d.diagnostics import ERROR_CODES, IO_ERROR, error_finding
from lint_h2d.findings import Applicability, Finding
from lint_h2d.pipeline import analyze_many, default_jobs, load_sources
from lint_h2d.plan import Options
from lint_h2d.plan import units as plan_units
from lint_h2d.report import FORMATS, ReportContext
from lint_h2d.report.paths import display_path, printable
from lint_h2d.sources import Source, SourceError, WriteError, read_source, write_atomic

# Imported where needed, not here: LibCST, the rules, the inference and torch.  A pre-commit
# run whose files all come from the cache loads none of them (`python -X importtime`).

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
        p.add_argument("--add-noqa", action="store_true",
                       help="append `# noqa: CODE` to every flagged statement (to adopt the linter "
                            "in a large codebase), then exit")
        p.add_argument("--exclude", type=_globs, metavar="GLOBS",
                       help="comma-separated globs to skip; replaces the configured `exclude`")
        p.add_argument("--extend-exclude", type=_globs, metavar="GLOBS",
                       help="comma-separated globs to skip, on top of `exclude`")
        p.add_argument("--per-file-ignores", type=_per_file_ignore, action="append",
                       metavar="GLOB:CODES",
                       help="codes not reported in matching files (`tests/*:H2D001,H2D002`); "
                            "repeatable; replaces the configured `per-file-ignores`")
        p.add_argument("--extend-per-file-ignores", type=_per_file_ignore, action="append",
                       metavar="GLOB:CODES", help="like --per-file-ignores, added to the configured ones")
        p.add_argument("--output-file", "-o", metavar="PATH",
                       help="write the report (or the diff) to PATH instead of stdout")
        p.add_argument("--show-files", action="store_true",
                       help="list the files that would be checked, then exit")
        p.add_argument("--show-settings", action="store_true",
                       help="print the settings that apply to the first path, then exit")
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

    explain = sub.add_parser("explain", help="say why H2D001 flags a write or not (what it knows of the "
                                             "destination, the indices and the value)")
    explain.add_argument("places", nargs="+", metavar="PATH:LINE",
                         help="a file and the line of a `t[...] = v` write (a file alone: all of its writes)")

    verify = sub.add_parser("verify", help="run each fix (or the built-in matrix) against the original (needs torch)")
    from lint_h2d.verify import add_arguments as add_verify_arguments

    add_verify_arguments(verify)
    sub.add_parser("server", help="run the language server over stdio (needs `lint-h2d[server]`)")
    return parser


def _globs(text: str) -> List[str]:
    return [g.strip() for g in text.split(",") if g.strip()]


def _per_file_ignore(text: str) -> Tuple[str, Tuple[str, ...]]:
    glob, sep, codes = text.rpartition(":")
    if not sep or not glob or not codes.strip():
        raise argparse.ArgumentTypeError(f"expected GLOB:CODES (e.g. 'tests/*:H2D001'), got {text!r}")
    return glob, tuple(_codes(codes))


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of the output went away (`lint-h2d explain ... | head`): stop quietly, as a
    Unix filter does on SIGPIPE, with the shell's status for it (128 + 13).  Standard output is
    pointed at the null device first, so that the interpreter's flush at exit cannot raise
    again.  Files a `--fix` rewrote are written whole before any output (atomically, one by
    one), so none is left half-written."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


#: `lint-h2d ... | head`: the status a process killed by SIGPIPE reports in a shell.
EXIT_BROKEN_PIPE = 141


def _main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if args.command == "rule":
        return run_rule(args, sys.stdout)
    if args.command == "verify":
        return run_verify(args, sys.stdout, sys.stderr)
    if args.command == "explain":
        from lint_h2d.explain import run_explain

        return run_explain(args.places, sys.stdout, sys.stderr)
    if args.command == "server":
        return run_server(sys.stderr)
    if args.add_noqa and (args.fix or args.diff or "-" in args.paths):
        sys.stderr.write("lint-h2d: error: --add-noqa cannot be combined with --fix, --diff or stdin\n")
        return EXIT_ERROR
    try:
        if args.show_settings:
            return run_show_settings(args, sys.stdout)
        if args.show_files:
            return run_show_files(args, sys.stdout, sys.stderr)
        if args.output_file:
            with open(args.output_file, "w", encoding="utf-8", newline="") as report:
                return _run(args, report)
        return _run(args, sys.stdout)
    except BrokenPipeError:
        raise  # the reader went away: `main`
    except OSError as exc:
        sys.stderr.write(f"lint-h2d: error: {args.output_file}: {exc.strerror or exc}\n")
        return EXIT_ERROR
    except ConfigError as exc:
        sys.stderr.write(f"lint-h2d: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("lint-h2d: interrupted\n")
        return 130
    except Exception as exc:  # a bug in lint-h2d: exit 2, never 1 (which means "findings")
        from lint_h2d.diagnostics import describe_exception

        sys.stderr.write(f"lint-h2d: internal error: {describe_exception(exc)}\n"
                         "Please report this with the command that caused it.\n")
        return EXIT_ERROR


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if "-" in args.paths:
        return run_stdin(args, sys.stdin, out, sys.stderr)
    return run_check(args, out, sys.stderr)


def run_show_files(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`--show-files`: what a run with these paths and settings would check."""
    files, problems = discover(args.paths, _resolver(args))
    for path in sorted(files):
        out.write(f"{path}\n")
    for problem in problems:
        err.write(f"lint-h2d: {'warning' if problem.warning else 'error'}: {problem.path}: {problem.message}\n")
    return EXIT_ERROR if any(not p.warning for p in problems) else EXIT_OK


def run_show_settings(args: argparse.Namespace, out: TextIO) -> int:
    """`--show-settings`: the resolved settings of the first path (its nearest config)."""
    first = args.stdin_filename if "-" in args.paths and args.stdin_filename else args.paths[0]
    resolver = _resolver(args)
    settings = resolver.for_folder(Path(os.path.realpath(first))) if os.path.isdir(first) \
        else resolver.for_path(first)
    out.write(f"Resolved settings for: {first}\n")
    out.write(f"Settings path: {settings.config_path or '(defaults)'}\n")
    for item in dataclasses.fields(settings):
        out.write(f"{item.name.replace('_', '-')} = {getattr(settings, item.name)!r}\n")
    return EXIT_OK


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`lint-h2d verify`: imported lazily, so the linter itself never needs torch."""
    from lint_h2d.verify import run_verify as verify

    try:
        return verify(args, out, err)
    except ConfigError as exc:
        err.write(f"lint-h2d: error: {exc}\n")
        return EXIT_ERROR


def run_server(err: TextIO) -> int:
    """`lint-h2d server`: imported lazily, so `check` never needs pygls."""
    try:
        from lint_h2d.server import main as serve
    except ImportError as exc:
        err.write(f"lint-h2d: error: the language server needs the `server` extra "
                  f"(pip install 'lint-h2d[server]'): {exc}\n")
        return EXIT_ERROR
    return serve()


def run_rule(args: argparse.Namespace, out: TextIO) -> int:
    from lint_h2d.rules import all_rules

    rules = all_rules()
    if args.all or not args.code:
        for r in rules:
            out.write(f"{r.code}  {r.name}  {r.summary}\n")
        return EXIT_OK
    for r in rules:
        if r.code == args.code.upper():
            out.write(r.doc.render(r.code, r.name))
            return EXIT_OK
    from lint_h2d.diagnostics import DIAGNOSTIC_DOCS, render_diagnostic

    if args.code.upper() in DIAGNOSTIC_DOCS:  # lint-h2d's own diagnostics (H2D900-H2D902)
        out.write(render_diagnostic(args.code.upper()))
        return EXIT_OK
    sys.stderr.write(f"lint-h2d: error: unknown rule {args.code!r} (see `lint-h2d rule --all`)\n")
    return EXIT_ERROR


def _resolver(args: argparse.Namespace) -> Resolver:
    """Each file's settings (its nearest config, or --config) with the command line's overrides."""
    force = bool(getattr(args, "force_exclude", False))

    def adjust(settings: Settings) -> Settings:
        settings = cli_overrides(settings, args.select, args.ignore, args.extend_select)
        changes: Dict[str, object] = {}
        if force:
            changes["force_exclude"] = True
        if args.exclude is not None:
            changes["exclude"] = tuple(args.exclude)
        if args.extend_exclude:
            changes["extend_exclude"] = tuple(settings.extend_exclude) + tuple(args.extend_exclude)
        ignores = tuple(args.per_file_ignores) if args.per_file_ignores else settings.per_file_ignores
        if args.per_file_ignores or args.extend_per_file_ignores:
            changes["per_file_ignores"] = ignores + tuple(args.extend_per_file_ignores or ())
        return dataclasses.replace(settings, **changes) if changes else settings  # type: ignore[arg-type]

    return Resolver(Path(args.config) if args.config else None, adjust)


def _options(args: argparse.Namespace) -> Options:
    return Options(
        use_cache=not args.no_cache,
        cache_dir=Path(os.path.abspath(args.cache_dir)) if args.cache_dir else None,
        walk=any(os.path.isdir(p) for p in args.paths if p != "-"),
        use_prefilter=not args.no_prefilter,
    )


def _warn(messages: Sequence[str], err: TextIO) -> None:
    for message in dict.fromkeys(messages):
        err.write(f"lint-h2d: warning: {message}\n")


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    resolver = _resolver(args)
    files, problems = discover(args.paths, resolver)
    # A broken configuration is reported as before (stderr, exit 2), once per message; the
    # files it applies to are not checked, the others are.
    for message in dict.fromkeys(p.message for p in problems if p.config):
        err.write(f"lint-h2d: error: {message}\n")
    # Caches are read only when nothing is rewritten (a fix must see the file as it is).
    read_cache = not (args.fix or args.diff or args.no_prefilter)
    if read_cache:
        # Files are read only when the cache cannot answer them by stat (`pipeline.py`).
        sources: List[Source] = []
        errors: List[Finding] = []
        targets: List[Union[Source, str]] = list(files)
    else:
        sources, errors = load_sources(files)
        targets = list(sources)
    errors += [error_finding(IO_ERROR, p.path, f"cannot check {p.path}: {p.message}")
               for p in problems if not p.warning]
    warnings = [f"{p.path}: {p.message}" for p in problems if p.warning]
    with span("plan"):  # the index built and, without a findings cache key known, resolved
        units, caches = plan_units(resolver, targets, _options(args), findings_cache=read_cache)
    for settings in dict.fromkeys(u.settings for u in units):
        warnings += glob_warnings(settings)
    _warn(warnings, err)
    jobs = args.jobs if args.jobs > 0 else default_jobs()
    from lint_h2d.report.progress import for_stream

    progress = for_stream(err)
    read: Dict[str, Source] = {s.path: s for s in sources}
    try:
        with span("analyze_many"):
            results = analyze_many(units, jobs, progress=progress, read=read)
    finally:
        if progress is not None:
            progress.close()
    for cache in caches:
        cache.save()
    if read_cache:
        # The reporters quote the flagged lines; --add-noqa rewrites the flagged files.
        sources = _flagged_sources(results, read)
    if args.add_noqa:
        return run_add_noqa(sources, results, errors, args, out, err)
    engines = {u.path: u for u in units}

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
            new_text, done, remaining = engines[path].engine.fix_text(path, source.text, args.unsafe_fixes)
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


def _flagged_sources(results: Dict[str, List[Finding]], read: Dict[str, Source]) -> List[Source]:
    """The sources of the files with findings, read now if the cache answered them unread (a
    file that cannot be read any more is left out: its findings are still reported)."""
    out: List[Source] = []
    for path, findings in results.items():
        if not findings or all(f.code in ERROR_CODES for f in findings):
            continue
        source = read.get(path)
        if source is None:
            try:
                source = read_source(path)
            except SourceError:
                continue
        out.append(source)
    return out


def run_add_noqa(sources: Sequence[Source], results: Dict[str, List[Finding]],
                 errors: List[Finding], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`check --add-noqa`: silence what exists today, so that only new findings fail."""
    from fixers.edits import apply_edits
    from lint_h2d.add_noqa import noqa_edits

    added = 0
    for source in sources:
        findings = [f for f in results.get(source.path, ()) if f.code not in ERROR_CODES]
        edits = noqa_edits(source.text, findings)
        if not edits:
            continue
        new_text = apply_edits(source.text, [e.edit for e in edits])
        try:
            write_atomic(source, new_text)
        except WriteError as exc:
            errors.append(error_finding(IO_ERROR, source.path, f"cannot add noqa to {source.path}: {exc}"))
            continue
        added += sum(len(e.codes) for e in edits)
    failures = sorted(errors + [f for fs in results.values() for f in fs if f.code in ERROR_CODES],
                      key=Finding.sort_key)
    if failures:
        _render(failures, args, {}, out)
    err.write(f"Added {added} noqa directive{'' if added == 1 else 's'}.\n")
    return EXIT_ERROR if failures else EXIT_OK


def run_stdin(args: argparse.Namespace, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """`check - --stdin-filename PATH`: the code comes from stdin and PATH names it.

    The report goes to stdout; with --fix stdout gets the fixed source and nothing else (the
    remaining findings go to stderr), with --diff it gets the diff. Exit codes as for files.
    """
    from lint_h2d.sources import SourceError, decode

    if args.paths != ["-"]:
        err.write("lint-h2d: error: `-` (read stdin) cannot be combined with other paths\n")
        return EXIT_ERROR
    path = args.stdin_filename or "-"
    buffer = getattr(stdin, "buffer", None)
    raw = buffer.read() if buffer is not None else stdin.read().encode("utf-8")
    resolver = _resolver(args)
    settings = resolver.for_path(args.stdin_filename or os.path.join(os.getcwd(), "-"))

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
    units, _ = plan_units(resolver, [source], _options(args), findings_cache=False)
    engine = units[0].engine
    _warn(glob_warnings(settings), err)
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
    if args.show_fixes and applied and args.output_format in ("full", "concise"):
        # As ruff: the list is for a reader; a machine format's stream stays one document.
        out.write("\nFixed:\n")
        for f in sorted(applied, key=Finding.sort_key):
            out.write(f"  {display_path(f.path)}:{f.location.row}: {f.code} {f.fix.message if f.fix else ''}\n")
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
    # A message may quote a file name with undecodable bytes (IO errors do).
    findings = [dataclasses.replace(f, message=printable(f.message)) for f in findings]
    out.write(FORMATS[args.output_format](findings, ctx))


def _statistics(findings: Sequence[Finding], out: TextIO) -> None:
    from lint_h2d.rules import all_rules

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
        split_lines(before, keepends=True), split_lines(after, keepends=True),
        fromfile=path, tofile=path,
    )
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
