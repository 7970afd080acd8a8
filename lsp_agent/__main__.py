"""`lsp-agent` and `python -m lsp_agent`: a head start for the commonest one-shot commands
(head_start.py), before the CLI's own imports, then the CLI."""

import sys

from . import head_start


def main() -> int:
    try:
        answered = head_start.start(sys.argv[1:])
        if answered is None:
            answered = head_start.answer_alone(sys.argv[1:])
        if answered is not None:
            return answered
        from .cli import main as cli_main

        return cli_main()
    except (KeyboardInterrupt, BrokenPipeError) as exc:  # before the CLI's handlers were there
        return head_start.ended_by(exc)
    finally:
        head_start.discard()


if __name__ == "__main__":  # not when a worker process imports it (multiprocessing's spawn)
    raise SystemExit(main())
