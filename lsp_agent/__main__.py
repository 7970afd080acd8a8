"""`lsp-agent` and `python -m lsp_agent`: a head start for the commonest one-shot commands
(head_start.py), before the CLI's own imports, then the CLI."""

import sys

from . import ahead, head_start


def main() -> int:
    try:
        answered = head_start.start(sys.argv[1:])
        if answered is None:
            answered = head_start.answer_alone(sys.argv[1:])
        if answered is not None:
            return answered
        from .cli import main as cli_main

        return cli_main()
    except (KeyboardInterrupt, BrokenPipeError) as exc:  # outside the CLI's handlers: the head start's
        command = head_start.command_of(sys.argv[1:])
        return head_start.ended_by(exc, "lsp-agent" + (f" {command[0]}" if command else ""))
    finally:
        ahead.discard()


if __name__ == "__main__":  # not when a worker process imports it (multiprocessing's spawn)
    raise SystemExit(main())
