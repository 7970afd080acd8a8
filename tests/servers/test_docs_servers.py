"""The docs' examples that need real language servers (a console block right under
`<!-- servers -->`), run with the servers `make test-servers` installs first on PATH."""

from __future__ import annotations

from tests.docs.docs_examples import DOCS, REPO, Neovim, examples, make_workspace

from .test_real_servers import pytestmark  # noqa: F401  (the same CI rule: never skipped there)


def test_every_server_example_prints_what_the_docs_show(tmp_path):
    root = make_workspace(tmp_path)
    found = list(examples(root, Neovim(root), DOCS, servers=True))
    assert len(found) >= 3
    failures = []
    for path, example in found:
        try:
            example.evaluate()
        except AssertionError as failure:
            failures.append(f"{path.relative_to(REPO)}:{example.line}: {failure}")
    assert not failures, "\n\n".join(failures)
