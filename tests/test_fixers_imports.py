"""``fixers.imports.import_insertion``: the import a fix needs, once, where isort keeps it."""
from __future__ import annotations

import libcst as cst
import pytest

from fixers.edits import TextEdit, Unfixable
from fixers.imports import import_insertion
from tests.test_fixers_support import apply, vllm_file

VLLM = "from vllm.platforms import current_platform"
TORCH = "import torch"


def _insert(source: str, line: str) -> str:
    edit = import_insertion(cst.parse_module(source), line)
    assert isinstance(edit, TextEdit), edit
    out = apply(source, [edit])
    assert import_insertion(cst.parse_module(out), line) is None  # inserted once, then present
    return out


# --- already present -------------------------------------------------------------------------

PRESENT = [
    (VLLM + "\n", VLLM),
    ("from vllm.platforms import (\n    current_platform,\n    other,\n)\n", VLLM),
    ("from vllm.platforms import current_platform as current_platform\n", VLLM),
    ("import os\n" + VLLM + "  # noqa\n\nx = 1\n", VLLM),
    ("x = 1\n\n\ndef f():\n    pass\n\n\n" + VLLM + "\n", VLLM),  # any top-level line counts
    ("try:\n    " + VLLM + "\nexcept ImportError:\n    current_platform = None\n", VLLM),
    ("import torch\n", TORCH),
    ("import torch as torch\n", TORCH),
    ("import torch.nn\n", TORCH),
    ("import torch.nn.functional as F\nimport torch.cuda\n", TORCH),
    ("import os, torch\n", TORCH),
    ("import os; import torch\n", TORCH),
    ("import torch.nn.functional\n", "import torch.nn"),
]


@pytest.mark.parametrize("source, line", PRESENT)
def test_not_reinserted_when_present(source: str, line: str) -> None:
    assert import_insertion(cst.parse_module(source), line) is None


# --- conflicts ---------------------------------------------------------------------------------

CONFLICTS = [
    ("current_platform = get()\n", VLLM),
    ("from other import current_platform\n", VLLM),
    ("from vllm.platforms import rocm as current_platform\n", VLLM),
    ("def current_platform():\n    pass\n", VLLM),
    ("class current_platform:\n    pass\n", VLLM),
    ("if x:\n    current_platform: object = 1\n", VLLM),
    ("for current_platform in []:\n    pass\n", VLLM),
    ("with f() as current_platform:\n    pass\n", VLLM),
    ("torch = None\n", TORCH),
    ("import numpy as torch\n", TORCH),
    ("from jax import torch\n", TORCH),
    ("a, (b, torch) = 1, (2, 3)\n", TORCH),
]


@pytest.mark.parametrize("source, line", CONFLICTS)
def test_refuses_to_rebind(source: str, line: str) -> None:
    result = import_insertion(cst.parse_module(source), line)
    assert isinstance(result, Unfixable)
    assert "already bound" in result.reason


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    current_platform = 1\n",  # local names do not conflict
        "class A:\n    current_platform = 1\n",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    " + VLLM + "\n",  # does not run
        "f = lambda current_platform: current_platform\n",
        "import vllm.platforms\n",
    ],
)
def test_bindings_that_do_not_conflict(source: str) -> None:
    assert isinstance(import_insertion(cst.parse_module(source), VLLM), TextEdit)


@pytest.mark.parametrize("line", ["x = 1", "import a; import b", "from a import *", "if x: import a", "("])
def test_rejects_non_import_line(line: str) -> None:
    with pytest.raises(ValueError):
        import_insertion(cst.parse_module("import os\n"), line)


# --- placement -------------------------------------------------------------------------------

VLLM_HEADER = (
    "# SPDX-License-Identifier: Apache-2.0\n"
    '"""Doc."""\n'
    "\n"
    "from dataclasses import dataclass\n"
    "\n"
    "import torch\n"
    "\n"
    "from vllm.config import VllmConfig\n"
    "from vllm.logger import init_logger\n"
    "{here}"
    "from vllm.utils import (\n"
    "    cdiv,\n"
    ")\n"
    "\n"
    "logger = init_logger(__name__)\n"
)

PLACEMENT = [
    pytest.param(
        VLLM_HEADER.format(here=""),
        VLLM,
        VLLM_HEADER.format(here=VLLM + "\n"),
        id="sorted-among-same-package",
    ),
    pytest.param(
        "import os\n\nfrom vllm.a import b\n\n\ndef f():\n    pass\n",
        VLLM,
        "import os\n\nfrom vllm.a import b\nfrom vllm.platforms import current_platform\n\n\ndef f():\n    pass\n",
        id="after-last-of-same-package",
    ),
    pytest.param(
        "from vllm.z import b\n# about y\nfrom vllm.zz import y\n",
        "from vllm.zy import q",
        "from vllm.z import b\nfrom vllm.zy import q\n# about y\nfrom vllm.zz import y\n",
        id="before-comment-of-next-line",
    ),
    pytest.param(
        "import regex as re\nfrom pydantic import Field\nfrom torch.distributed import Store\n",
        TORCH,
        "import regex as re\nimport torch\nfrom pydantic import Field\nfrom torch.distributed import Store\n",
        id="straight-imports-before-from-imports",
    ),
    pytest.param(
        "import os\nfrom typing import Any\n\nimport torch\n\nx = 1\n",
        VLLM,
        "import os\nfrom typing import Any\n\nimport torch\n\nfrom vllm.platforms import current_platform\n\nx = 1\n",
        id="new-first-party-section-after-third-party",
    ),
    pytest.param(
        "import os\n\nimport torch\nx = 1\n",
        VLLM,
        "import os\n\nimport torch\n\nfrom vllm.platforms import current_platform\n\nx = 1\n",
        id="new-section-code-right-after",
    ),
    pytest.param(
        "import os\n\nfrom vllm.a import b\n\n\ndef f():\n    pass\n",
        TORCH,
        "import os\n\nimport torch\n\nfrom vllm.a import b\n\n\ndef f():\n    pass\n",
        id="third-party-section-after-stdlib",
    ),
    pytest.param(
        "import os\n\nimport numpy as np\nimport triton\n\nfrom vllm.a import b\n",
        TORCH,
        "import os\n\nimport numpy as np\nimport torch\nimport triton\n\nfrom vllm.a import b\n",
        id="joins-third-party-section",
    ),
    pytest.param(
        "import os\n\nfrom vllm.a import b\n\nfrom .c import d\n",
        "from zzz import e",
        "import os\n\nfrom vllm.a import b\n\nfrom zzz import e\n\nfrom .c import d\n",
        id="first-party-before-relative",
    ),
    pytest.param(
        "from .c import d\n\nx = 1\n",
        VLLM,
        "from vllm.platforms import current_platform\n\nfrom .c import d\n\nx = 1\n",
        id="absolute-before-relative-only",
    ),
    pytest.param(
        "import os\nimport sys\n\nimport torch\n",
        "import json",
        "import json\nimport os\nimport sys\n\nimport torch\n",
        id="stdlib-joins-stdlib",
    ),
    pytest.param(
        "from typing import TYPE_CHECKING\n\nfrom vllm.a import b\n\nif TYPE_CHECKING:\n    from vllm.x import y\n"
        "from vllm.z import w\n\nx = 1\n",
        VLLM,
        "from typing import TYPE_CHECKING\n\nfrom vllm.a import b\n\nif TYPE_CHECKING:\n    from vllm.x import y\n"
        "from vllm.platforms import current_platform\nfrom vllm.z import w\n\nx = 1\n",
        id="type-checking-block-is-header",
    ),
    pytest.param(
        "try:\n    import triton\nexcept ImportError:\n    triton = None\nimport os\n\nx = 1\n",
        "import sys",
        "try:\n    import triton\nexcept ImportError:\n    triton = None\nimport os\nimport sys\n\nx = 1\n",
        id="try-block-is-header",
    ),
    pytest.param(
        "import os\n\nx = 1\n\nimport torch\n",
        VLLM,
        "import os\n\nfrom vllm.platforms import current_platform\n\nx = 1\n\nimport torch\n",
        id="header-ends-at-first-code",
    ),
    pytest.param(
        "import os",
        VLLM,
        "import os\n\nfrom vllm.platforms import current_platform",
        id="no-final-newline",
    ),
    pytest.param(
        "import os\r\n\r\nx = 1\r\n",
        VLLM,
        "import os\r\n\r\nfrom vllm.platforms import current_platform\r\n\r\nx = 1\r\n",
        id="crlf",
    ),
    pytest.param(
        "from vllm.a import b\r\n",
        VLLM,
        "from vllm.a import b\r\nfrom vllm.platforms import current_platform\r\n",
        id="crlf-same-package",
    ),
    # --- no imports yet
    pytest.param(
        '"""Doc."""\n\nx = 1\n',
        TORCH,
        '"""Doc."""\n\nimport torch\n\nx = 1\n',
        id="after-docstring",
    ),
    pytest.param(
        '"""Doc."""\nx = 1\n',
        TORCH,
        '"""Doc."""\n\nimport torch\n\nx = 1\n',
        id="after-docstring-code-right-after",
    ),
    pytest.param(
        '"""Doc."""\n\nfrom __future__ import annotations\n\n\ndef f():\n    pass\n',
        TORCH,
        '"""Doc."""\n\nfrom __future__ import annotations\n\nimport torch\n\n\ndef f():\n    pass\n',
        id="after-future",
    ),
    pytest.param(
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n",
        TORCH,
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport torch\n\nx = 1\n",
        id="after-shebang-and-coding",
    ),
    pytest.param(
        "# SPDX-License-Identifier: Apache-2.0\n# Copyright\n\n# about x\nx = 1\n",
        TORCH,
        "# SPDX-License-Identifier: Apache-2.0\n# Copyright\n\nimport torch\n\n# about x\nx = 1\n",
        id="after-licence-block",
    ),
    pytest.param(
        "x = 1\n",
        TORCH,
        "import torch\n\nx = 1\n",
        id="top",
    ),
    pytest.param(
        "",
        TORCH,
        "import torch\n",
        id="empty-module",
    ),
    pytest.param(
        '"""Doc."""',
        TORCH,
        '"""Doc."""\n\nimport torch',
        id="docstring-only-no-final-newline",
    ),
    pytest.param(
        "x = 1\r\n",
        TORCH,
        "import torch\r\n\r\nx = 1\r\n",
        id="top-crlf",
    ),
]


@pytest.mark.parametrize("source, line, expected", PLACEMENT)
def test_placement(source: str, line: str, expected: str) -> None:
    assert _insert(source, line) == expected


def test_identical_edits_for_identical_requests() -> None:
    module = cst.parse_module("import os\n\nx = 1\n")
    assert import_insertion(module, VLLM) == import_insertion(module, VLLM + "  ")


@pytest.mark.parametrize(
    "relative",
    ["v1/attention/backends/rocm_attn.py", "device_allocator/__init__.py", "models/deepseek_v41/__init__.py"],
)
def test_vllm_files_reinsert_byte_identical(relative: str) -> None:
    """Deleting vLLM's own ``current_platform`` import and re-adding it gives the file back."""
    original = vllm_file(relative)
    lines = original.splitlines(keepends=True)
    index = lines.index(VLLM + "\n")
    drop = {index}
    if lines[index - 1] == "\n" and lines[index + 1] == "\n":
        drop.add(index + 1)  # it was a section of its own
    source = "".join(line for n, line in enumerate(lines) if n not in drop)
    assert _insert(source, VLLM) == original
