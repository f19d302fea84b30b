"""Pure LibCST rewrites used by lint-h2d's fixes.

This package depends only on libcst and the standard library; it knows nothing of
rules, findings or configuration.  A rule decides *whether* to fix; a fixer decides
*how the new code looks* and returns :class:`fixers.edits.TextEdit` values.
"""
