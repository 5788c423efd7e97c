"""An example worker application: run `send` over the queue "mail" of a
file until SIGTERM (or, with --idle, until the queue stays empty that long).

    python3 examples/worker_app.py jobs.db [--idle SECONDS]

Jobs come from anywhere: this program, other processes, or the C tool
(`emqlite --db jobs.db enqueue mail '{"to": "ada@example.com"}'`).
"""
import json
import sys
import threading
from typing import Optional

import emqlite
from emqlite.worker import Worker


# The worker runs send() on several threads: one line at a time on stdout
# (print writes the text and its newline apart, so two threads could
# interleave them).
_out = threading.Lock()


def send(job: emqlite.Job) -> Optional[bytes]:
    """Deliver one mail; a raise is retried under the queue's policy."""
    mail = json.loads(job.payload or b"{}")
    with _out:
        print("sent %s to %s (attempt %d)" % (job.id, mail.get("to"),
                                              job.attempts), flush=True)
    return b"ok"


def main(argv: list[str]) -> int:
    path = argv[1]
    idle = float(argv[3]) if len(argv) > 3 and argv[2] == "--idle" else None
    stats = Worker(path, "mail", send, threads=2, idle=idle).run()
    print("worker stopped: %s" % stats, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
