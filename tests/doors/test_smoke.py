from lsp_agent.tools import catalog


def test_catalog_lists_read_with_its_schema():
    tools = {t["name"]: t for t in catalog()}
    assert tools["read"]["inputSchema"]["required"] == ["path"]


def test_read_small_file(tmp_path, run):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    answer = run("read", path="a.txt")
    assert answer["text"].splitlines()[1:] == ["1:one", "2:two"]
    assert answer["next"] is None
