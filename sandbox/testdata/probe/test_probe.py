"""Probe of what a sandboxed test can reach, run by TestBwrapReadConfinement.

It tries what the PROBE_* variables name (one path or address a line) and
prints one line for each attempt, "probe OP TARGET: ok[: detail]" or
"probe OP TARGET: error: message"; the Go test asserts on these lines. It
runs under pytest (test_probe) or as a plain python3 script.
"""
import os
import socket


def targets(name):
    return [t for t in os.environ.get(name, "").split("\n") if t]


def report(op, target, fn):
    try:
        detail = fn(target)
    except Exception as e:  # any failure is the answer
        print(f"probe {op} {target}: error: {e}", flush=True)
    else:
        print(f"probe {op} {target}: ok: {detail}", flush=True)


def listdir(p):
    return " ".join(sorted(os.listdir(p)))


def read(p):
    with open(p, "rb") as f:
        return f"{len(f.read())} bytes"


def write(p):
    with open(p, "w") as f:
        f.write("written by the probe\n")
    return "written"


def connect(addr):
    host, port = addr.rsplit(":", 1)
    socket.create_connection((host, int(port)), timeout=5).close()
    return "connected"


def probe():
    for t in targets("PROBE_LIST"):
        report("list", t, listdir)
    for t in targets("PROBE_READ"):
        report("read", t, read)
    for t in targets("PROBE_WRITE"):
        report("write", t, write)
    for t in targets("PROBE_CONNECT"):
        report("connect", t, connect)
    for t in targets("PROBE_ENV"):
        print(f"probe env {t}: {'set' if t in os.environ else 'unset'}", flush=True)
    print(f"probe home {os.environ.get('HOME', '')}: ok", flush=True)


def test_probe():
    probe()


if __name__ == "__main__":
    probe()
