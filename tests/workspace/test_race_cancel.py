"""A cancellation storm during ripgrep's output: searches with a lot of output, each cancelled
at a different moment while rg writes. Every call ends cancelled or with its whole answer;
killing rg mid-line once left a half JSON line that was parsed (an internal_error)."""

from __future__ import annotations

import threading

from lsp_agent.errors import Cancelled
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

RUNS = 60


def test_every_cancelled_search_is_cancelled_or_whole(tmp_path):
    for n in range(40):
        (tmp_path / f"m{n}.py").write_text("".join(f"needle_{i} = '{'x' * 200}'\n" for i in range(2_000)))
    ws = Workspace([tmp_path])
    whole = call(Context(ws), "search", {"pattern": "needle_", "max_chars": 200_000})
    outcomes: dict[str, int] = {"cancelled": 0, "whole": 0}
    for run in range(RUNS):
        ctx = Context(ws)
        started = threading.Event()

        def cancel_when_rg_writes(ctx=ctx, started=started, run=run) -> None:
            started.wait()
            # a different moment each run: after 0..59 rounds of the interpreter's switching
            for _ in range(run * 50):
                pass
            ctx.cancel_event.set()

        canceller = threading.Thread(target=cancel_when_rg_writes)
        canceller.start()
        try:
            started.set()
            answer = call(ctx, "search", {"pattern": "needle_", "max_chars": 200_000})
        except Cancelled:
            outcomes["cancelled"] += 1
        else:
            assert "error" not in answer, answer["text"][:300]
            assert answer["total_matches"] == whole["total_matches"]
            outcomes["whole"] += 1
        finally:
            canceller.join()
    assert outcomes["cancelled"] + outcomes["whole"] == RUNS
    assert outcomes["cancelled"] > 0  # the storm did cancel searches while rg wrote
