"""Pure LibCST rewrites used by lint-h2d's fixes.

This package depends only on libcst and the standard library; it knows nothing of
rules, findings or configuration.  A rule decides *whether* to fix; a fixer decides
*how the new code looks* and returns :class:`fixers.edits.TextEdit` values (or an
:class:`fixers.edits.Unfixable` saying why not).  Edits touch only the bytes of the fix,
so everything else in the file stays as it was.

Modules:

* :mod:`fixers.edits` -- ``TextEdit`` (LibCST positions: 1-based lines, 0-based character
  columns, end exclusive), ``Unfixable``, ``apply_edits`` (dedups identical edits, raises
  ``OverlappingEdits``).
* :mod:`fixers.device_zero` -- ``device_zero_form(T[I], V)``: the kernel-only spelling of a
  scalar element write (``t[0] = 0`` -> ``t[0].zero_()``, or ``t[:1].zero_()`` when the caller
  proves the length; ``t[i] = v`` -> ``t.select(0, i).fill_(v)``).
* :mod:`fixers.platform_gate` -- ``Gate`` and ``gated_statement``: ``if <rocm>: <device form>
  else: <original line>``, as vLLM ships it; ``matches_gate`` lets a rule recognise an
  already-gated line (the original stays in ``else``) and leave it alone.
* :mod:`fixers.statements` -- new statements as text at the right place and indentation:
  ``replace_statement_line`` (a whole line, e.g. by the gated ``if``), ``replace_small_statement``
  (in place, also after ``;`` or in ``if x: ...``), ``replace_expression``, and
  ``gated_replacement`` (the whole gated fix: statement edit + import edit).
* :mod:`fixers.imports` -- ``import_insertion``: the gate's import, once, where isort keeps it;
  never rebinding a name the module already uses.
* :mod:`fixers.removal` -- ``remove_statement``: delete a statement (``pass`` if its block would
  become empty; only it and its ``;`` on a shared line).
* :mod:`fixers.pipeline` -- the one fix pipeline every rule goes through: a ``Rewrite`` (what
  replaces a statement, or nothing) becomes text; ``runs``/``group_edit`` put consecutive
  rewritten statements of one block under one gate.
* :mod:`fixers.layout` -- line length and line breaks of new statements as ruff format / black
  lay them out (the project's ``line-length``).
* :mod:`fixers.arguments` -- text edits on a call's arguments (append or drop a keyword) that
  keep every other byte, comments between arguments included.

Typical use from a rule, with ``PositionProvider``/``ParentNodeProvider`` metadata::

    form = device_zero_form(assign.targets[0].target, assign.value)
    if isinstance(form, Unfixable): ...
    fix = gated_replacement(module, line, assign, line_range.start, line_range.end,
                            form.call, VLLM_GATE, source=source)      # tuple of edits | Unfixable
    # or, ungated and valid wherever the statement stands:
    edit = replace_small_statement(module, assign_range.start, assign_range.end,
                                   cst.Expr(form.call), source=source)

Safety is the rule's call: ``DeviceZero.index_is_literal`` / ``value_is_literal`` /
``value_fits`` say whether the rewrite is certainly equivalent (a non-literal index may be a
list or tensor, which ``select`` rejects where the assignment accepts it; a non-literal value
may be a one-element tensor, which ``fill_`` rejects, and is evaluated later than in the
assignment; an integer literal outside int64 makes the assignment raise where ``fill_``
writes).
"""
