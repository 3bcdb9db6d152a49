# SPDX-License-Identifier: GPL-2.0
"""The tracefs helpers of the tests/race/ Python probes (ghost_open.py,
stale_reader.py): python3 finds this module next to the script it runs."""
import errno
import os

T = '/sys/kernel/tracing'


def put(path, text):
    """Append text to a tracefs file (one write)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def get(path):
    """A tracefs file's text, stripped."""
    with open(path) as f:
        return f.read().strip()


def errname(e):
    """An OSError's errno name (EBUSY), or its number."""
    return errno.errorcode.get(e.errno, e.errno)
